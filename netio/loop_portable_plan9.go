package netio

// sysErr is err: Plan 9's errors are strings, with no number to take out
// of net.Conn's wrapping (see loop_portable_errno.go).
func sysErr(err error) error { return err }
