//go:build !unix

package netio

import "errors"

// rawReader is unused where sockets are not file descriptors: Conn.Read
// sends the queue before every read that finds something queued.
type rawReader struct{ ok bool }

func (r *rawReader) init(*Conn) {}

func (r *rawReader) read([]byte, bool, bool) (int, *[]byte, error) {
	return 0, nil, errors.ErrUnsupported
}
