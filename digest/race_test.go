//go:build race

package digest

// raceEnabled: sync.Pool drops a share of what is put in it under the race
// detector, so the pooled paths allocate there and allocation budgets do
// not hold.
const raceEnabled = true
