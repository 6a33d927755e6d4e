//go:build !race

package digest

const raceEnabled = false
