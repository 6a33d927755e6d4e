package smtpsource

// isReset reports whether err is how a connection the peer has reset or
// closed fails a read or a write: Plan 9 has no error numbers for it, so
// such an error counts as the connection's failure, as any other.
func isReset(err error) bool { return false }
