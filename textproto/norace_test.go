//go:build !race

package textproto

const raceEnabled = false
