package smtpsink

import (
	"io"
	"testing"
	"time"
)

// AbortData answers DATA with 354, waits (through the test's clock), and
// then sends 550 and closes the connection without reading the message;
// with no delay it does not wait.
func TestAbortData(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			waits := make(chan time.Duration, 1)
			release := make(chan struct{})
			var got messages
			s := startSink(t, Config{AbortData: true, AbortDataDelay: delay, OnMessage: got.add},
				hooks{sleep: func(d time.Duration) {
					waits <- d
					<-release
				}})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<a@b>")
			c.cmd(354, "DATA")
			if delay > 0 {
				if d := <-waits; d != delay {
					t.Errorf("waited %v, want %v", d, delay)
				}
				close(release)
			}
			c.expect(550)
			if _, err := c.R.ReadByte(); err != io.EOF {
				t.Errorf("after the 550: %v, want EOF", err)
			}
			select {
			case d := <-waits:
				t.Errorf("another wait of %v", d)
			default:
			}
			s.Close()
			if st := s.Stats(); st.Aborted != 1 || st.Messages != 0 || st.Errors[550] != 1 || len(got.all()) != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
