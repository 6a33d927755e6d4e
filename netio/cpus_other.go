//go:build !linux

package netio

// checkPins has nothing to check: the loops pin nothing here.
func checkPins([]int) error { return nil }
