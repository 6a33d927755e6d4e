package textproto

import (
	"bufio"
	"io"
	"net"
	nettextproto "net/textproto"
)

// An Error is a numeric reply from the peer that was not the code the
// caller expected. It is net/textproto's own type, so errors.As finds it
// with a *net/textproto.Error as well.
type Error = nettextproto.Error

// A ProtocolError reports input that breaks the protocol's rules, such as
// a malformed response line or header. It is net/textproto's own type.
type ProtocolError = nettextproto.ProtocolError

// A Conn is a text protocol connection: a [Reader] and a [Writer] over the
// same network connection, and a [Pipeline] that orders the requests and
// responses of goroutines sharing it. The methods of the three embedded
// types are promoted to Conn.
type Conn struct {
	Reader
	Writer
	Pipeline
	conn io.ReadWriteCloser
}

// NewConn returns a [Conn] that reads and writes conn through a bufio.Reader
// and a bufio.Writer of the default size.
func NewConn(conn io.ReadWriteCloser) *Conn {
	c := &Conn{conn: conn}
	c.Reader.R = bufio.NewReader(conn)
	c.Writer.W = bufio.NewWriter(conn)
	return c
}

// Close closes the network connection under c.
func (c *Conn) Close() error {
	return c.conn.Close()
}

// Dial connects to addr on network with [net.Dial] and returns a [Conn] over
// the new connection.
func Dial(network, addr string) (*Conn, error) {
	nc, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return NewConn(nc), nil
}

// Cmd waits for its turn in the request pipeline, sends one command line
// (format and args as for fmt.Sprintf, followed by \r\n) and flushes it.
// It returns the command's pipeline id, or 0 and the error if sending
// failed: pass the id to StartResponse and EndResponse around reading the
// reply, so that replies are read in the order the commands were sent.
func (c *Conn) Cmd(format string, args ...any) (id uint, err error) {
	id = c.Next()
	c.StartRequest(id)
	err = c.PrintfLine(format, args...)
	c.EndRequest(id) // the next command may go, even after a failure
	if err != nil {
		id = 0
	}
	return id, err
}

// TrimString returns s with the spaces, tabs, CRs and LFs at either end
// cut off. It is net/textproto's function.
func TrimString(s string) string {
	return nettextproto.TrimString(s)
}

// TrimBytes returns the part of b between the spaces, tabs, CRs and LFs at
// either end. It is net/textproto's function.
func TrimBytes(b []byte) []byte {
	return nettextproto.TrimBytes(b)
}
