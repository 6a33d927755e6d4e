//go:build netio_portable

package netio

// FD is c's socket; only on c's loop (in a Handler, OnOpen or Do), while
// c is open.
func (c *LoopConn) FD() int {
	fd := -1
	c.l.control(c, func(f uintptr) { fd = int(f) })
	return fd
}
