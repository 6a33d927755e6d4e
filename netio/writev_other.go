//go:build unix && !(darwin || linux || openbsd)

package netio

import "errors"

// haveWritev is false: Conn.Read sends the queue through the connection.
const haveWritev = false

func writevNonblock(int, [][]byte) (int, error) { return 0, errors.ErrUnsupported }
