package netio

// isResetWrite reports whether err is how a write on a connection the peer
// reset fails: on Plan 9, whose errors are strings with no numbers to
// match, any error.
func isResetWrite(err error) bool { return err != nil }
