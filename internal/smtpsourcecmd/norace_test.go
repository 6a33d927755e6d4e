//go:build !race

package smtpsourcecmd

const raceEnabled = false
