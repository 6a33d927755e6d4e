package smtpsink

import (
	"net"
	"testing"
	"time"
)

// A message whose 250 cannot leave (its client reset the connection while
// the reply waited, Config.Delay ".") is counted in Stats.Unsent, and in
// Messages; one whose 250 left is not.
func TestUnsent(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, reset := range []bool{false, true} {
			name := string(e) + "/sent"
			if reset {
				name = string(e) + "/reset"
			}
			t.Run(name, func(t *testing.T) {
				waiting := make(chan struct{})
				release := make(chan struct{})
				ended := make(chan SessionInfo, 1)
				s := startSink(t, Config{Engine: e, Delay: map[string]time.Duration{".": time.Second},
					OnSessionEnd: func(i SessionInfo) { ended <- i }},
					hooks{sleep: func(time.Duration) {
						close(waiting)
						<-release
					}})
				c := dial(t, s)
				c.cmd(250, "HELO c")
				c.cmd(250, "MAIL FROM:<a@b>")
				c.cmd(250, "RCPT TO:<a@b>")
				c.cmd(354, "DATA")
				c.send("x\r\n.\r\n")
				<-waiting
				if reset {
					c.raw.(*net.TCPConn).SetLinger(0)
					c.raw.Close() // a reset, which loopback delivers before Close returns
					close(release)
				} else {
					close(release)
					c.expect(250)
					c.cmd(221, "QUIT")
				}
				<-ended
				st := s.Stats()
				want := uint64(0)
				if reset {
					want = 1
				}
				if st.Messages != 1 || st.Unsent != want {
					t.Errorf("messages %d, unsent %d; want 1, %d", st.Messages, st.Unsent, want)
				}
			})
		}
	}
}
