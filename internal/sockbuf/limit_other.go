//go:build !linux

package sockbuf

// Capped returns "": elsewhere than on Linux, a size the system does not
// allow fails when it is set (BSDs: ENOBUFS), or cannot be told.
func Capped(size int) string { return "" }
