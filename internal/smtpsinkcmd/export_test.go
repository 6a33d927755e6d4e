package smtpsinkcmd

import "testing"

// SetNewID makes the dumps' ids come from next until the test ends (set
// it before the command runs).
func SetNewID(t testing.TB, next func() string) {
	old := newID
	newID = next
	t.Cleanup(func() { newID = old })
}
