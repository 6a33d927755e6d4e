//go:build race

package smtpsink

// raceEnabled: sync.Pool drops a share of what is put in it under the race
// detector, so pooled paths allocate there.
const raceEnabled = true
