//go:build race

package smtpsourcecmd

// raceEnabled: the race detector allocates on its own.
const raceEnabled = true
