package tlsbatch

import (
	"errors"
	"net"
	"testing"
)

// A Conn passes writes through unless held; held, it writes nothing until
// a batch is full or flushed, and a failed write is the error of the
// Write or Flush that made it.
func TestConn(t *testing.T) {
	c := &countConn{}
	b := &Conn{Conn: c}
	b.Write([]byte("handshake"))
	if c.n != 1 {
		t.Fatalf("unheld: %d writes", c.n)
	}
	b.hold = true
	rec := make([]byte, Size/3)
	for i := range 3 {
		if n, err := b.Write(rec); n != len(rec) || err != nil || c.n != 1 {
			t.Fatalf("record %d: %d, %v; %d writes", i, n, err, c.n)
		}
	}
	b.Write(rec) // no room: the three go out, this one is held
	if c.n != 2 || c.last != 3*len(rec) {
		t.Fatalf("full batch: %d writes, the last %d bytes", c.n, c.last)
	}
	if err := b.Flush(); err != nil || c.n != 3 || c.last != len(rec) {
		t.Fatalf("flush: %v; %d writes, the last %d bytes", err, c.n, c.last)
	}
	if err := b.Flush(); err != nil || c.n != 3 {
		t.Fatalf("empty flush: %v; %d writes", err, c.n)
	}
	if n, err := b.Write(make([]byte, Size+1)); n != Size+1 || err != nil || c.n != 4 || c.last != Size+1 {
		t.Fatalf("write larger than a batch: %d, %v; %d writes, the last %d bytes", n, err, c.n, c.last)
	}
	c.err = errors.New("broken")
	b.Write(rec)
	if err := b.Flush(); !errors.Is(err, c.err) {
		t.Errorf("flush on a broken connection: %v", err)
	}
	for range 3 {
		b.Write(rec)
	}
	if n, err := b.Write(rec); n != 0 || !errors.Is(err, c.err) {
		t.Errorf("write that fills the batch on a broken connection: %d, %v", n, err)
	}
}

type countConn struct {
	net.Conn
	n, last int
	err     error
}

func (c *countConn) Write(p []byte) (int, error) {
	c.n++
	c.last = len(p)
	if c.err != nil {
		return 0, c.err
	}
	return len(p), nil
}
