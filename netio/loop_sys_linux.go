//go:build linux && !netio_portable

package netio

// connSys is the epoll implementation's part of a LoopConn: none, its
// state is in LoopConn's own fields.
type connSys struct{}

// control runs f with c's descriptor.
func (l *loop) control(c *LoopConn, f func(fd uintptr)) error {
	f(uintptr(c.fd))
	return nil
}
