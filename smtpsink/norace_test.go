//go:build !race

package smtpsink

const raceEnabled = false
