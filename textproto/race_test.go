//go:build race

package textproto

// The race detector slows the widest sequence tests down many times: they
// run shorter sequences under it.
const raceEnabled = true
