//go:build !race

package smtpsource

const raceEnabled = false
