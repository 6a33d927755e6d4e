//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// pauseHandler answers each line with the line and "!", and after the
// line "pause" stops reading, leaving what follows unused, until resume
// (run on the loop) turns reading on again: a protocol that pauses
// before its next command.
func pauseHandler(resume func(c *LoopConn)) Handler {
	return func(c *LoopConn, in []byte) (used int) {
		for {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				return used
			}
			line := string(in[used : used+i])
			used += i + 1
			c.WriteString(line + "!\n")
			if line == "pause" {
				c.SetReading(false)
				resume(c)
				return used
			}
		}
	}
}

// A command that came in the read that paused the connection is handed to
// the Handler when reading resumes, not only once more bytes come: the
// client that sent "pause" and "noop" together waited for the second
// reply until the idle timeout closed it. Reading resumes from a timer
// of 0 armed in the call that paused, and from Do once the reply to
// "pause" has left (the portable loops started a read at the end of that
// call, before the turn that offers the held input, which then waited
// for that read's bytes).
func TestLoopsResumeHeldInput(t *testing.T) {
	srv, cli := tlsConfigs(t)
	for _, fromDo := range []bool{false, true} {
		for _, tlsOn := range []bool{false, true} {
			paused := make(chan *LoopConn, 1)
			resume := func(c *LoopConn) {
				if fromDo {
					paused <- c
				} else {
					c.AfterFunc(0, func(c *LoopConn) { c.SetReading(true) })
				}
			}
			var opt LoopOptions
			if tlsOn {
				opt.TLSConfig = srv
			}
			s := startLoops(t, pauseHandler(resume), &opt)
			var c net.Conn
			if tlsOn {
				tc, tap := dialTLS(t, s, cli)
				tap.hold = true // both lines in one record, read at once
				tc.Write([]byte("pause\nnoop\n"))
				if err := tap.flush(); err != nil {
					t.Fatal(err)
				}
				c = tc
			} else {
				c = dial(t, s)
				c.Write([]byte("pause\nnoop\n")) // one segment, one read
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound on a hang, not a measure
			r := bufio.NewReader(c)
			want := "pause!\nnoop!\n"
			if fromDo {
				lc := <-paused
				got := make([]byte, len("pause!\n"))
				if _, err := io.ReadFull(r, got); string(got) != "pause!\n" {
					t.Fatalf("TLS %v: read %q, %v", tlsOn, got, err)
				}
				waitSent(s)
				if err := lc.Do(func(c *LoopConn) { c.SetReading(true) }); err != nil {
					t.Fatal(err)
				}
				want = "noop!\n"
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(r, got); string(got) != want {
				t.Errorf("TLS %v, resumed from Do %v: read %q, %v", tlsOn, fromDo, got, err)
			}
		}
	}
}
