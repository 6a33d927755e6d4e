package netio

// peerErr is false: Plan 9's errors are strings, with no numbers to
// match; a connection the peer reset counts as an Error.
func peerErr(error) bool { return false }
