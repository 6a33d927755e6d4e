package textproto

import (
	"bufio"
	"fmt"
	"io"
	"net"
)

// An Error is a numeric reply from the peer that was not the code the
// caller expected.
type Error struct {
	Code int
	Msg  string
}

// Error formats the code with three digits and quotes the message, as
// net/textproto does: `550 "mailbox unavailable"`.
func (e *Error) Error() string {
	return fmt.Sprintf("%03d %q", e.Code, e.Msg)
}

// A ProtocolError reports input that breaks the protocol's rules, such as
// a malformed response line or header.
type ProtocolError string

func (p ProtocolError) Error() string {
	return string(p)
}

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
	return &Conn{
		Reader: Reader{R: bufio.NewReader(conn)},
		Writer: Writer{W: bufio.NewWriter(conn)},
		conn:   conn,
	}
}

// Close closes the connection.
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
// It returns the command's pipeline id: pass it to StartResponse and
// EndResponse around reading the reply, so that replies are read in the
// order the commands were sent.
func (c *Conn) Cmd(format string, args ...any) (id uint, err error) {
	id = c.Next()
	c.StartRequest(id)
	err = c.PrintfLine(format, args...)
	c.EndRequest(id)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// TrimString returns s without leading and trailing ASCII space
// (space, tab, CR and LF).
func TrimString(s string) string {
	i, j := 0, len(s)
	for i < j && isASCIISpace(s[i]) {
		i++
	}
	for j > i && isASCIISpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// TrimBytes returns b without leading and trailing ASCII space
// (space, tab, CR and LF).
func TrimBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isASCIISpace(b[i]) {
		i++
	}
	for j > i && isASCIISpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isASCIILetter(c byte) bool {
	c |= 0x20 // fold to lower case
	return 'a' <= c && c <= 'z'
}
