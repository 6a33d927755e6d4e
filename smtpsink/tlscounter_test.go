package smtpsink

import (
	"crypto/tls"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The tls counter counts every handshake the sink completes: 200 clients
// each reset the connection as soon as their handshake is done (TLS 1.3:
// the client's Finished, which completes the sink's handshake, goes
// before the reset), and the counter reads 200 once the sessions, and
// their handshakes, are over (issue 27: the loops engine counted 5 to 40).
func TestTLSCounterResets(t *testing.T) {
	const n = 200
	srv, cli := testTLS(t)
	cli = cli.Clone()
	cli.MinVersion = tls.VersionTLS13
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			var ended atomic.Int64
			done := make(chan struct{})
			s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: true, Timeout: time.Minute,
				OnSessionEnd: func(SessionInfo) {
					if ended.Add(1) == n {
						close(done)
					}
				}}, hooks{})
			for range n {
				nc, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				if err := tls.Client(nc, cli).Handshake(); err != nil {
					t.Fatal(err)
				}
				nc.(*net.TCPConn).SetLinger(0)
				nc.Close()
			}
			<-done
			s.Close()
			awaitNoHandshakes()
			if st := s.Stats(); st.TLS != n || st.Sessions != n {
				t.Errorf("%d handshakes, each followed by a reset: stats %+v", n, st)
			}
		})
	}
}

// awaitNoHandshakes returns once no goroutine runs a server's handshake
// (the loops engine's may outlast its session's end; what it counts, it
// has counted by then).
func awaitNoHandshakes() {
	buf := make([]byte, 1<<20)
	for {
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		if st := string(buf); !strings.Contains(st, "startHandshake") && !strings.Contains(st, "crypto/tls.(*Conn).serverHandshake") {
			return
		}
		buf = buf[:cap(buf)]
		time.Sleep(time.Millisecond)
	}
}
