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
// line "pause" stops reading, leaving what follows unused, until a timer
// of 0 turns reading on again: a protocol that pauses before its next
// command.
func pauseHandler(c *LoopConn, in []byte) (used int) {
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
			c.AfterFunc(0, func(c *LoopConn) { c.SetReading(true) })
			return used
		}
	}
}

// A command that came in the read that paused the connection is handed to
// the Handler when reading resumes, not only once more bytes come: the
// client that sent "pause" and "noop" together waited for the second
// reply until the idle timeout closed it.
func TestLoopsResumeHeldInput(t *testing.T) {
	srv, cli := tlsConfigs(t)
	for _, tlsOn := range []bool{false, true} {
		var opt LoopOptions
		if tlsOn {
			opt.TLSConfig = srv
		}
		s := startLoops(t, pauseHandler, &opt)
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
		got := make([]byte, len("pause!\nnoop!\n"))
		if _, err := io.ReadFull(bufio.NewReader(c), got); string(got) != "pause!\nnoop!\n" {
			t.Errorf("TLS %v: read %q, %v", tlsOn, got, err)
		}
	}
}
