package servetest

// isReset is false: Plan 9's errors are strings, with no numbers to
// match; a connection the server reset fails the check as any error.
func isReset(error) bool { return false }
