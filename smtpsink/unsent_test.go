package smtpsink

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// A message whose 250 cannot leave (its client reset the connection while
// the reply waited, Config.Delay ".") is counted in Stats.Unsent, and in
// Messages; one whose 250 left is not. Stats.Positive counts the 250 as
// written either way (its doc says so): HELO's, MAIL's, RCPT's and the
// message's.
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
					client := c.raw.LocalAddr()
					c.raw.(*net.TCPConn).SetLinger(0)
					c.raw.Close() // a reset
					// Loopback delivers it as Close returns, or, on a
					// loaded machine, a moment later.
					awaitGone(t, s.Addr(), client)
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
				if st.Positive[250] != 4 || st.Positive[354] != 1 {
					t.Errorf("positive %v; want 250: 4 (the message's counted, sent or not) and 354: 1", st.Positive)
				}
			})
		}
	}
}

// awaitGone waits until the kernel holds no TCP connection from local to
// remote (/proc/net/tcp and tcp6: one that a reset ended is gone from
// them), seen in two reads in a row (a table read in pieces may miss a
// row that moves); where the system does not tell, it returns at once.
func awaitGone(t *testing.T, local, remote net.Addr) {
	t.Helper()
	port := func(a net.Addr) string { return fmt.Sprintf(":%04X", a.(*net.TCPAddr).Port) }
	lp, rp := port(local), port(remote)
	there := func() (bool, error) {
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, err := os.ReadFile(f)
			if err != nil && f == "/proc/net/tcp6" {
				continue // no IPv6
			}
			if err != nil {
				return false, err
			}
			for _, l := range strings.Split(string(b), "\n")[1:] {
				if f := strings.Fields(l); len(f) > 2 && strings.HasSuffix(f[1], lp) && strings.HasSuffix(f[2], rp) {
					return true, nil
				}
			}
		}
		return false, nil
	}
	gone := 0
	for deadline := time.Now().Add(time.Minute); gone < 2; time.Sleep(time.Millisecond) { // a hang guard
		switch yes, err := there(); {
		case err != nil:
			return
		case yes:
			gone = 0
		default:
			gone++
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection from %v to %v is still there a minute after its reset", local, remote)
		}
	}
}
