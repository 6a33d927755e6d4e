package tcpperfcmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/sleep/sleeptest"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// serveTLS runs `wirespeed serve -engine engine -tls` in process and
// returns its address.
func serveTLS(t *testing.T, engine string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, []string{"-engine", engine, "-addr", "127.0.0.1:0", "-tls"}, pw, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		t.Fatalf("serve's first line %q, %v", line, err)
	}
	go io.Copy(io.Discard, br) // what it prints when it stops
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

// runJSON runs the command on clk (runOn) and returns its result.
func runJSON(t *testing.T, clk *sleeptest.Clock, args ...string) tcpperf.Result {
	t.Helper()
	var out, errb bytes.Buffer
	if err := runOn(clk, append(args, "-json", "-q"), &out, &errb); err != nil {
		t.Fatalf("%v: %v: %s", args, err, errb.String())
	}
	var res tcpperf.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	return res
}

// `tcpperf -tls -tls-insecure` against `serve -tls` (its self-signed
// certificate) runs on engine netio and says so; with -engine netio
// given too, and open loop. On a fake clock: the closed loop's, moved by
// the server's answers through a proxy (clocked), ends after 100 of them;
// the open loop's schedule is its 200 measured messages (after the
// warm-up's 40), whenever they go out.
func TestRunTLSInsecure(t *testing.T) {
	for _, engine := range []string{"std", "netio"} {
		t.Run(engine, func(t *testing.T) {
			addr := serveTLS(t, engine)
			for _, c := range []struct {
				args  []string
				proxy bool  // the server's answers move the clock
				sent  int64 // all received too; 0: some
			}{
				{[]string{"-tls", "-tls-insecure", "-qps", "0", "-depth", "2"}, true, 0},
				{[]string{"-tls", "-tls-insecure", "-engine", "netio", "-qps", "2000", "-warmup", "20ms"}, false, 200},
			} {
				clk := sleeptest.NewClock()
				to := addr
				if c.proxy {
					to = clocked(t, clk, addr)
				}
				res := runJSON(t, clk, append([]string{"-addr", to, "-conns", "4", "-cpus", "2", "-duration", "100ms", "-warmup", "0s"}, c.args...)...)
				if res.Engine != tcpperf.EngineNetio || !res.TLS || res.Connected != 4 || res.Received == 0 || res.Errors != 0 {
					t.Errorf("%v: %+v", c.args, res)
				}
				if c.sent > 0 && (res.Sent != c.sent || res.Received != c.sent) {
					t.Errorf("%v: sent %d, received %d, want %d each", c.args, res.Sent, res.Received, c.sent)
				}
			}
		})
	}
}

// -tls-ca verifies the server's certificate (the host of -addr, or
// -tls-server-name); without -tls-insecure or -tls-ca, serve's
// self-signed certificate is refused; -tls on -engine tcpperf is a
// configuration error; the -tls- flags need -tls.
func TestRunTLSVerify(t *testing.T) {
	cert, err := selfsigned.Server("localhost")
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.Start(serve.Config{Engine: "netio", Mode: "echo", Addr: "127.0.0.1:0",
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, serve.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"-addr", s.Addr(), "-conns", "2", "-qps", "0", "-duration", "50ms", "-warmup", "0s"}
	// The run that connects is on a fake clock that the server's answers
	// move (clocked): it ends after 50 of them, however long they take.
	// The others fail before they run.
	clk := sleeptest.NewClock()
	res := runJSON(t, clk, "-addr", clocked(t, clk, s.Addr()), "-conns", "2", "-qps", "0", "-duration", "50ms", "-warmup", "0s",
		"-tls", "-tls-ca", ca, "-tls-server-name", "localhost")
	if res.Connected != 2 || res.Errors != 0 || res.Received == 0 {
		t.Errorf("-tls-ca: %+v", res)
	}
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"-tls", "-tls-ca", ca}, tcpperf.ErrConnect}, // the certificate does not name 127.0.0.1
		{[]string{"-tls"}, tcpperf.ErrConnect},                // unknown authority
		{[]string{"-tls", "-tls-insecure", "-engine", "tcpperf"}, tcpperf.ErrConfig},
	} {
		var out, errb bytes.Buffer
		err := Run(context.Background(), append(append(base, tc.args...), "-q"), &out, &errb)
		if !errors.Is(err, tc.want) {
			t.Errorf("%v: %v, want %v", tc.args, err, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if err := Run(context.Background(), append(base, "-tls-insecure", "-q"), &out, &errb); err == nil || !strings.Contains(err.Error(), "-tls") {
		t.Errorf("-tls-insecure without -tls: %v", err)
	}
}
