package tcpperf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/netio"
)

// serveTLS starts `serve -tls` in process on engine, and returns its
// address and a client configuration that trusts its certificate.
func serveTLS(t *testing.T, engine, mode string) (string, *tls.Config) {
	t.Helper()
	cert, err := selfsigned.Server("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.Start(serve.Config{Engine: engine, Mode: mode, Addr: "127.0.0.1:0",
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, serve.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return s.Addr(), &tls.Config{RootCAs: pool}
}

// Over TLS against `serve -tls` on its std and netio engines, in echo
// and line mode, closed and open loop: every connection's handshake
// (verified, for Addr's host) comes before the schedule, every response
// is checked, and the counts add up. Engine left unset is netio. On the
// system clock: the open loop's schedule is its 200 measured messages,
// sent however late (up to the drain's end after the end), and the
// closed loop's count in its 100ms is the machine's (a loop that starts
// after them measures nothing), so every connection sends its Depth and
// every measured message is received. The drain ends when the last
// response is in: its minute is a guard against a hang.
func TestTLS(t *testing.T) {
	for _, engine := range []string{"std", "netio"} {
		for _, mode := range []string{"echo", "line"} {
			for _, open := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/open=%v", engine, mode, open), func(t *testing.T) {
					addr, cli := serveTLS(t, engine, mode)
					cfg := Config{Addr: addr, TLS: cli, Conns: 8, Loops: 2, MsgSize: 100, Mode: mode,
						Duration: 100 * time.Millisecond, Depth: 3, DrainTimeout: time.Minute}
					if open {
						cfg.QPS, cfg.Warmup = 2000, 20*time.Millisecond
					}
					res, err := Run(context.Background(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					if res.Engine != EngineNetio || !res.TLS || res.Connected != 8 || res.Errors != 0 || res.Unanswered != 0 {
						t.Fatalf("want engine netio over TLS, 8 connections, no errors: %+v", res)
					}
					switch {
					case open && (res.Sent != 200 || res.Received != 200):
						// 2000/s: 240 messages in 120ms, 200 of them measured.
						t.Fatalf("want 200 sent and received in the measurement: %+v", res)
					case !open && (res.SentAll < 8*3 || res.Received != res.Sent):
						t.Fatalf("closed loop: want 24 sent at least, every measured one received: %+v", res)
					}
				})
			}
		}
	}
}

// A handshake that fails is a connect failure, with crypto/x509's error;
// TLS on tcpperf's own loops is a configuration error.
func TestTLSErrors(t *testing.T) {
	addr, _ := serveTLS(t, "netio", "echo")
	_, err := Run(context.Background(), Config{Addr: addr, TLS: &tls.Config{}, Duration: 10 * time.Millisecond})
	if !errors.Is(err, ErrConnect) || !errors.As(err, new(x509.UnknownAuthorityError)) {
		t.Fatalf("unknown CA: %v, want ErrConnect with x509.UnknownAuthorityError", err)
	}
	if strings.Contains(err.Error(), "speak TLS") {
		t.Errorf("unknown CA: %v, hints at a server without TLS", err)
	}
	// A server without TLS (an echo server sends the ClientHello back) is
	// hinted at.
	_, err = Run(context.Background(), Config{Addr: server(t, echo), TLS: &tls.Config{InsecureSkipVerify: true}, Duration: 10 * time.Millisecond})
	if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "does the server speak TLS?") {
		t.Errorf("plain echo server: %v, want ErrConnect asking whether the server speaks TLS", err)
	}
	// A server that never answers the ClientHello: the dial timeout ends
	// the handshake, which the error says (it read "context deadline
	// exceeded" alone), with the hint. On a fake clock, which stands
	// still while connecting, so that netio's handshake timeout (as long,
	// on the run's clock) does not come first.
	_, err = RunEnv(context.Background(), Config{Addr: silentServer(t), TLS: &tls.Config{InsecureSkipVerify: true}, DialTimeout: 50 * time.Millisecond, Duration: 10 * time.Millisecond},
		Env{Clock: newFakeClock()})
	if !errors.Is(err, ErrConnect) || !errors.Is(err, netio.ErrHandshake) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "dial timeout (50ms)") || !strings.Contains(err.Error(), "does the server speak TLS?") {
		t.Errorf("silent server: %v, want ErrConnect, a handshake cut short by the dial timeout", err)
	}
	_, err = Run(context.Background(), Config{Addr: addr, TLS: &tls.Config{}, Engine: EngineTcpperf})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("TLS on engine tcpperf: %v, want ErrConfig", err)
	}
}
