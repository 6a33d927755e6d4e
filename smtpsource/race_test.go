//go:build race

package smtpsource

// raceEnabled: the race detector allocates on its own, and sync.Pool drops
// a share of what is put in it, so allocation counts grow under it.
const raceEnabled = true
