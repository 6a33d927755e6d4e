//go:build !unix

package smtpsource

import "net"

// pending cannot look at a socket without reading it here: known is
// false.
func pending(c net.Conn) (came, known bool) { return false, false }
