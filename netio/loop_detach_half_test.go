//go:build unix

package netio

import (
	"errors"
	"io"
	"testing"
	"time"
)

// TestLoopsDetachCloseWrite: the conn Detach returns half-closes, as a
// proxy does: its CloseWrite sends the output the loop had queued, then
// the end of stream, and it still reads what the peer sends after.
func TestLoopsDetachCloseWrite(t *testing.T) {
	type result struct {
		in  string
		err error
	}
	done := make(chan result, 1)
	h := func(c *LoopConn, in []byte) int {
		c.WriteString("queued\n")
		nc, err := c.Detach()
		if err != nil {
			done <- result{err: err}
			c.Close()
			return len(in)
		}
		go func() {
			defer nc.Close()
			cw, ok := nc.(interface{ CloseWrite() error })
			if !ok {
				done <- result{err: errNoCloseWrite}
				return
			}
			if err := cw.CloseWrite(); err != nil {
				done <- result{err: err}
				return
			}
			nc.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
			b, err := io.ReadAll(nc)
			done <- result{in: string(b), err: err}
		}()
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1})
	nc := dial(t, s)
	nc.SetDeadline(time.Now().Add(time.Minute)) // a hang guard
	if _, err := nc.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(nc) // to the end of stream CloseWrite sent
	if err != nil || string(got) != "queued\n" {
		r := <-done
		t.Fatalf("peer read %q, %v (detached side: %v); want the queued output, then EOF", got, err, r.err)
	}
	if _, err := nc.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	nc.CloseWrite()
	if r := <-done; r.err != nil || r.in != "after\n" {
		t.Fatalf("detached side read %q, %v; want %q", r.in, r.err, "after\n")
	}
}

var errNoCloseWrite = errors.New("the detached conn has no CloseWrite")
