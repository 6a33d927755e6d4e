package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/netio"
	"github.com/wirespeed/wirespeed/tcpperf"
)

func startT(t *testing.T, cfg Config, h *hooks) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	cfg.ErrorLog = log.New(io.Discard, "", 0)
	s, err := Start(cfg, builtin(h))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServePrintsAddressAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Config{Engine: "netio", Mode: "line", Addr: "127.0.0.1:0"}, Builtin(), pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{
		{Engine: "nginx", Mode: "echo", Addr: "127.0.0.1:0"},
		{Engine: "std", Mode: "http", Addr: "127.0.0.1:0"},
		{Engine: "netio", Mode: "line", Addr: "127.0.0.1:0", Delay: time.Millisecond},
		{Engine: "gnet", Mode: "line", Addr: "127.0.0.1:0"}, // the comparison module's
	} {
		if _, err := Start(bad, Builtin()); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// -delay on a real clock: tcpperf never sees less than the delay.
func TestServeDelay(t *testing.T) {
	s := startT(t, Config{Engine: "std", Mode: "line", Delay: 2 * time.Millisecond}, nil)
	defer s.Stop()
	res, err := tcpperf.Run(context.Background(), tcpperf.Config{Addr: s.Addr(), Conns: 2, QPS: 200, Mode: "line", Duration: 300 * time.Millisecond,
		DrainTimeout: time.Minute}) // a hang guard: every response is waited for
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Received == 0 || res.P50 < 2000 {
		t.Fatalf("2ms server: %+v", res)
	}
}

// A connection accepted just before stop closes the listener, but registered
// after stop closed the connections it knew of, is closed too: stop does not
// wait for that client to hang up.
func TestServeStopAcceptRace(t *testing.T) {
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			accepted, proceed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			h := &hooks{
				accepted:   func() { once.Do(func() { close(accepted) }); <-proceed },
				stopClosed: func() { close(proceed) },
			}
			s := startT(t, Config{Engine: engine, Mode: "echo"}, h)
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			<-accepted // the server holds c, not yet registered
			// Stop returns although the client keeps c open (a stop that
			// waited for it would hang the test).
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("connection still open after stop")
			}
		})
	}
}

// -delay: each response is due delay after its own request was read, so
// the second of two pipelined requests is not answered a delay after the
// first (the old one-at-a-time sleep made the k-th k delays late). A fake
// clock stamps the requests and the writer's wait is held open until both
// are stamped: the reader must go on reading while a response waits.
func TestServeDelayPipelined(t *testing.T) {
	const delay = 150 * time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		engine, mode string
		reqs         []string // the second is sent once the first response waits
	}{
		{"std", "line", []string{"a\nb\n"}},
		{"netio-conn", "line", []string{"a\nb\n"}},
		{"std", "echo", []string{"a\n", "b\n"}},
	} {
		t.Run(tc.engine+"/"+tc.mode, func(t *testing.T) {
			stamped := make(chan struct{}, 2)
			waiting := make(chan time.Time, 2)
			release := make(chan struct{})
			var mu sync.Mutex
			clock := t0
			h := &hooks{
				now: func() time.Time {
					mu.Lock()
					defer mu.Unlock()
					stamped <- struct{}{}
					return clock
				},
				until: func(due time.Time) {
					waiting <- due
					<-release
					mu.Lock()
					clock = due // the wait ends at the due time
					mu.Unlock()
				},
			}
			s := startT(t, Config{Engine: tc.engine, Mode: tc.mode, Delay: delay}, h)
			defer s.Stop()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, r := range tc.reqs {
				if _, err := c.Write([]byte(r)); err != nil {
					t.Fatal(err)
				}
				<-stamped
			}
			if len(tc.reqs) == 1 {
				<-stamped // both lines of the one write
			}
			var dues []time.Time
			dues = append(dues, <-waiting)
			close(release)
			dues = append(dues, <-waiting)
			for i, due := range dues {
				if !due.Equal(t0.Add(delay)) {
					t.Errorf("response %d due %v after the first request was read, want %v", i, due.Sub(t0), delay)
				}
			}
			br := bufio.NewReader(c)
			for i := range 2 {
				line, err := br.ReadString('\n')
				if want := string(rune('a'+i)) + "\n"; err != nil || line != want {
					t.Fatalf("response %d: %q, %v; want %q", i, line, err, want)
				}
			}
		})
	}
}

// -delay: the responses waiting on a connection hold at most
// maxDelayedBytes; past that the reader waits for the writer, and a client
// that sends without reading is held back by TCP (it held 4096 responses
// of up to 64 KiB each, 256 MiB a connection). The writer's wait is held
// open until the reader has waited: 3 MiB of lines must not all be read
// before it does. Then every response comes, in order.
func TestServeDelayBounded(t *testing.T) {
	const size, n = 1000, 3 * maxDelayedBytes / 1000
	line := strings.Repeat("x", size-1) + "\n"
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			var stamped atomic.Int64
			all, full, release := make(chan struct{}), make(chan int64, 1), make(chan struct{})
			h := &hooks{
				now: func() time.Time {
					if stamped.Add(1) == n {
						close(all)
					}
					return time.Now()
				},
				until: func(time.Time) { <-release },
				full: func() {
					select {
					case full <- stamped.Load():
					default:
					}
				},
			}
			s := startT(t, Config{Engine: engine, Mode: "line", Delay: time.Millisecond}, h)
			defer s.Stop()
			open := sync.OnceFunc(func() { close(release) })
			defer open() // before Stop, which waits for the writer
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go c.Write([]byte(strings.Repeat(line, n)))
			select {
			case k := <-full:
				if k*size > maxDelayedBytes {
					t.Errorf("the reader waited with %d bytes of responses queued, over %d", k*size, maxDelayedBytes)
				}
			case <-all:
				t.Fatalf("all %d bytes read with no response written", n*size)
			}
			open()
			br := bufio.NewReader(c)
			for i := range n {
				if got, err := br.ReadString('\n'); err != nil || got != line {
					t.Fatalf("response %d: %.20q, %v", i, got, err)
				}
			}
		})
	}
}

// -delay: Stop drops the responses still due with their connections; it
// does not wait for them (with -delay 1h it waited an hour). The real
// waiter is used; a request is stamped before Stop.
func TestServeDelayStop(t *testing.T) {
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			stamped := make(chan struct{}, 1)
			h := &hooks{now: func() time.Time {
				stamped <- struct{}{}
				return time.Now()
			}}
			s := startT(t, Config{Engine: engine, Mode: "line", Delay: time.Hour}, h)
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte("x\n")); err != nil {
				t.Fatal(err)
			}
			<-stamped
			stopped := make(chan error, 1)
			go func() { stopped <- s.Stop() }()
			select {
			case err := <-stopped:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute): // a guard: Stop returns in milliseconds
				t.Fatal("Stop waits for a response due in an hour")
			}
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("read %d bytes, %v; want the connection closed, no response", n, err)
			}
		})
	}
}

// A failed accept (out of descriptors) does not stop the std engines
// accepting: the error is logged and the listener accepts again after a
// pause (it used to stop for good, saying nothing).
func TestServeAcceptError(t *testing.T) {
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			var logged strings.Builder
			var mu sync.Mutex
			h := &hooks{listener: func(ln net.Listener) net.Listener { return &failingListener{Listener: ln, fails: 2} }}
			cfg := Config{Engine: engine, Mode: "line", Addr: "127.0.0.1:0", ErrorLog: log.New(writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logged.Write(p)
			}), "", 0)}
			s, err := Start(cfg, builtin(h))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte("x\n"))
			c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard: the old engines never answered
			if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "x\n" {
				t.Fatalf("response %q, %v", line, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if n := strings.Count(logged.String(), "too many open files"); n != 2 {
				t.Errorf("log %q: want the 2 accept errors", logged.String())
			}
		})
	}
}

// A failingListener fails its first fails Accepts as a process out of
// descriptors does.
type failingListener struct {
	net.Listener
	fails int
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Engines lists this module's engines and then the comparison module's.
// A word that is not a flag is refused, not ignored for the default
// address, and so is a negative -delay.
func TestServeExtraArgument(t *testing.T) {
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"127.0.0.1:9123"}, &out, &errb); !errors.Is(err, cli.ErrUsage) {
		t.Fatalf("serve 127.0.0.1:9123: %v, want a usage error", err)
	}
	if err := Run(context.Background(), []string{"-delay", "-1s"}, &out, &errb); !errors.Is(err, cli.ErrUsage) {
		t.Fatalf("serve -delay -1s: %v, want a usage error", err)
	}
	// So is what no engine serves (they exited 1), and an empty -addr (it
	// listened on every interface, on a random port). The context is done
	// already: a server that starts stops at once.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"-engine", "nope"}, {"-mode", "nope"}, {"-engine", "gnet", "-delay", "1ms"},
		{"-engine", "evio", "-addr", "unix:/tmp/x"}, {"-addr", ""},
		// An address net cannot split (it failed to listen, exit 1), and
		// -compare-exe for an engine of this binary (it was ignored).
		{"-addr", "bogus"}, {"-addr", "::1:9"}, {"-engine", "std", "-compare-exe", "/nonexistent"},
		// A port by number no listener can have (it failed to listen,
		// exit 1).
		{"-addr", "127.0.0.1:65536"}, {"-addr", "127.0.0.1:-1"}, {"-addr", "127.0.0.1:no-such-service"},
	} {
		if err := Run(done, args, &out, &errb); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("serve %q: %v, want a usage error", args, err)
		}
	}
}

// A -compare-exe that names no program is a usage error naming the flag,
// found before anything starts: it failed when the engine started, with
// "fork/exec PATH: no such file or directory", exit 1. And what no engine
// serves is refused before the -tls-cert and -tls-key files are read: a
// missing file was the error (exit 1), not the unknown engine or empty
// -addr (exit 2). A host of -addr that does not exist (found as the
// server listens) and a -delay the idle timeout would cut short are
// usage errors too, naming their flag.
func TestServeUsageBeforeStart(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	notExec := filepath.Join(dir, "not-exec")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-engine", "gnet", "-compare-exe", missing}, "-compare-exe " + missing + ": "},
		{[]string{"-engine", "evio", "-compare-exe", dir}, "-compare-exe " + dir + ": "},
		{[]string{"-engine", "netpoll", "-compare-exe", notExec}, "-compare-exe " + notExec + ": "},
		{[]string{"-engine", "nope", "-tls-cert", missing, "-tls-key", missing}, "unknown engine"},
		{[]string{"-addr", "", "-tls-cert", missing, "-tls-key", missing}, "-addr"},
		{[]string{"-engine", "gnet", "-tls-cert", missing, "-tls-key", missing}, "-tls needs"},
		// A host that does not exist (it said "listen tcp: lookup HOST:
		// no such host", exit 1, the flag unsaid): a name no resolver
		// asks a server about, with its space.
		{[]string{"-addr", "no such host.invalid:0"}, `-addr "no such host.invalid:0": `},
		// A -delay the idle timeout would cut short (a client waiting
		// for its response got it and then the connection closed): at
		// the default idle timeout and at a given one.
		{[]string{"-delay", "5m"}, "-delay 5m0s: not shorter than the idle timeout"},
		{[]string{"-delay", "2s", "-idle-timeout", "1s"}, "-delay 2s: not shorter than the idle timeout (-idle-timeout 1s)"},
	} {
		err := Run(done, append([]string{"-addr", "127.0.0.1:0"}, c.args...), io.Discard, io.Discard)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("serve %q: %v (status %d), want a usage error saying %q", c.args, err, status, c.want)
		}
	}
}

// A -addr serve cannot listen on names the flag, as every other bad
// -addr does (it said "listen tcp ADDR: bind: ...", exit 1): a usage
// error, exit 2, for an address no run can listen on (not one of this
// host's; link-local IPv6 without its zone); exit 1 where the
// environment must change (a socket's directory missing). The engines'
// own failures are checked in servetest (listen-errors).
func TestServeListenErrors(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		engine, addr string
		status       int
	}{
		{"std", "[fe80::1]:0", 2},
		{"netio", "[fe80::1]:0", 2},
		{"std", "unix:" + filepath.Join(t.TempDir(), "missing", "s"), 1},
		{"netio-conn", "unix:" + filepath.Join(t.TempDir(), "missing", "s"), 1},
	}
	if ln, err := net.Listen("tcp", "192.0.2.1:0"); err == nil {
		ln.Close()
		t.Log("192.0.2.1 is this host's: not tried")
	} else {
		cases = append(cases, struct {
			engine, addr string
			status       int
		}{"std", "192.0.2.1:9000", 2})
	}
	for _, c := range cases {
		var errb bytes.Buffer
		err := Run(done, []string{"-engine", c.engine, "-addr", c.addr}, io.Discard, &errb)
		want := fmt.Sprintf("-addr %q: ", c.addr)
		if status, _ := cli.Status(err); status != c.status || !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("serve -engine %s -addr %s: %v (exit status %d), want %q in front, exit status %d", c.engine, c.addr, err, status, want, c.status)
		}
	}
}

func TestEnginesNames(t *testing.T) {
	got, own := Engines(), slices.Sorted(maps.Keys(Builtin()))
	if len(got) != len(own)+len(CompareEngines()) ||
		!slices.Equal(slices.Sorted(slices.Values(got[:len(own)])), own) ||
		!slices.Equal(got[len(own):], CompareEngines()) {
		t.Fatalf("Engines() = %v; Builtin has %v, CompareEngines %v", got, own, CompareEngines())
	}
}

// `wirespeed serve -engine gnet` builds the comparison module's binary from
// the checkout, which serves until ctx is done; then it stops on SIGTERM
// and Run returns its (clean) exit.
func TestRunCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the comparison module's binary")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"-engine", "gnet", "-mode", "line", "-addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q, %v (%v)", line, err, <-done)
	}
	go io.Copy(io.Discard, br)
	c, err := net.Dial("tcp", strings.TrimSpace(strings.TrimPrefix(line, "listening on ")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("a\nb\n")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "a\nb\n" {
		t.Fatalf("answer %q, %v", got, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Outside a wirespeed checkout there is nothing to build the comparison
// engines from: ErrNoCompare, and Run says how to do without.
func TestBuildCompareNoCheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := BuildCompare(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNoCompare) {
		t.Fatalf("BuildCompare outside a checkout: %v, want ErrNoCompare", err)
	}
	err = Run(context.Background(), []string{"-engine", "evio", "-addr", "127.0.0.1:0"}, io.Discard, io.Discard)
	if !errors.Is(err, ErrNoCompare) || !strings.Contains(err.Error(), "-compare-exe") {
		t.Fatalf("Run outside a checkout: %v", err)
	}
	// No go command on PATH: the error says so, and quotes no empty
	// stderr (it said "... not found in $PATH: ; or pass -compare-exe").
	t.Setenv("PATH", t.TempDir())
	err = Run(context.Background(), []string{"-engine", "evio", "-addr", "127.0.0.1:0"}, io.Discard, io.Discard)
	if !errors.Is(err, ErrNoCompare) || !errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), ": ;") {
		t.Fatalf("Run with no go command: %v", err)
	}
}

// TestServeUnix: -addr unix:PATH serves a Unix domain socket on the std,
// netio and netio-conn engines, every echo exact, taking over the socket
// file of a server that died, and its file is removed when the server
// stops; the other engines refuse it, and so does a path left out.
func TestServeUnix(t *testing.T) {
	for _, engine := range []string{"std", "netio", "netio-conn"} {
		for _, mode := range []string{"echo", "line"} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "s")
				dead, err := net.Listen("unix", path)
				if err != nil {
					t.Fatal(err)
				}
				// A server killed with -9. (An interface, not *net.UnixListener,
				// whose method Plan 9, without Unix sockets, lacks.)
				dead.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
				dead.Close()
				s := startT(t, Config{Engine: engine, Mode: mode, Addr: "unix:" + path}, nil)
				if s.Addr() != "unix:"+path {
					t.Fatalf("Addr %q, want unix:%s", s.Addr(), path)
				}
				var want []byte
				for i := range 2000 {
					want = fmt.Appendf(want, "message %d %s\n", i, strings.Repeat("x", i%300))
				}
				var wg sync.WaitGroup
				for range 4 {
					c, err := net.Dial("unix", path)
					if err != nil {
						t.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer c.Close()
						go func() {
							c.Write(want)
							c.(*net.UnixConn).CloseWrite()
						}()
						got, err := io.ReadAll(c)
						if err != nil || !bytes.Equal(got, want) {
							t.Errorf("echoed %d bytes (%v), want the %d sent", len(got), err, len(want))
						}
					}()
				}
				wg.Wait()
				if err := s.Stop(); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the socket file after Stop: %v", err)
				}
			})
		}
	}
	// The file was deleted while the server ran, and another server took
	// the path: stopping leaves the other one's socket alone.
	for _, engine := range []string{"std", "netio", "netio-conn"} {
		path := filepath.Join(t.TempDir(), "s")
		s := startT(t, Config{Engine: engine, Mode: "echo", Addr: "unix:" + path}, nil)
		os.Remove(path)
		other, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if c, err := net.Dial("unix", path); err != nil {
			t.Errorf("%s: the other server's socket after Stop: %v", engine, err)
		} else {
			c.Close()
		}
		other.Close()
	}
	for _, engine := range CompareEngines() {
		cfg := Config{Engine: engine, Mode: "echo", Addr: "unix:" + filepath.Join(t.TempDir(), "s")}
		if err := checkUnix(cfg); err == nil || !strings.Contains(err.Error(), "TCP only") {
			t.Errorf("%s with unix: %v, want a refusal", engine, err)
		}
	}
	if err := checkUnix(Config{Engine: "std", Mode: "echo", Addr: "unix:"}); err == nil {
		t.Error("unix: without a path: taken (an abstract socket of a random name)")
	}
}

// TestServeNetioStats: the serve command prints the netio engine's counts
// when it stops.
func TestServeNetioStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, Config{Engine: "netio", Mode: "echo", Addr: "unix:" + path}, Builtin(), pw, io.Discard)
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	if line, err := r.ReadString('\n'); line != "listening on unix:"+path+"\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello"))
	c.(*net.UnixConn).CloseWrite()
	if b, err := io.ReadAll(c); string(b) != "hello" || err != nil {
		t.Fatalf("echo %q, %v", b, err)
	}
	c.Close()
	cancel()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	js, ok := strings.CutPrefix(line, "netio stats: ")
	var st netio.LoopStats
	if !ok || json.Unmarshal([]byte(js), &st) != nil {
		t.Fatalf("last line %q, want netio stats: JSON", line)
	}
	if st.Accepted != 1 || st.Open != 0 || st.Closed.Total() != 1 {
		t.Fatalf("stats %+v, want one connection, closed", st)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A line longer than MaxLine ends the connection cleanly, after the
// responses to the lines before it: the std and netio-conn engines closed
// it with the client's input unread, which resets it, and the reset
// dropped the responses the client had not read yet (it read "connection
// reset by peer", some responses missing). The client sends 2 MiB after
// the long line, which the server never answers, then ends its stream.
func TestServeLongLineNoReset(t *testing.T) {
	cert, err := selfsigned.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		delayed bool
	}{
		{"std", Config{Engine: "std"}, false},
		{"netio-conn", Config{Engine: "netio-conn"}, false},
		{"netio", Config{Engine: "netio"}, false},
		{"std/delay", Config{Engine: "std", Delay: time.Hour}, true},
		{"netio-conn/delay", Config{Engine: "netio-conn", Delay: time.Hour}, true},
		{"std/tls", Config{Engine: "std", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, false},
		{"netio/tls", Config{Engine: "netio", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Mode = "line"
			// std and netio-conn close once the client's writes have
			// all returned: its tail is then surely unread in the
			// server's socket (the tail fits the socket buffers), which
			// a close without reading it resets.
			written := make(chan struct{})
			h := &hooks{tooLong: func() { <-written }}
			if tc.delayed {
				h.until = func(time.Time) {} // -delay's responses are due at once
			}
			s := startT(t, tc.cfg, h)
			defer s.Stop()
			raw, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			var c net.Conn = raw
			if tc.cfg.TLS != nil {
				c = tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
			}
			defer c.Close()
			const want = "one\ntwo\n"
			go func() {
				c.Write([]byte(want))
				c.Write(bytes.Repeat([]byte("x"), MaxLine+1))
				c.Write(bytes.Repeat([]byte("y\n"), 2<<10))
				close(written)
				if tc, ok := c.(*tls.Conn); ok {
					tc.CloseWrite()
				}
				raw.(*net.TCPConn).CloseWrite()
			}()
			c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
			got, err := io.ReadAll(c)
			if err != nil || string(got) != want {
				t.Errorf("read %q, %v; want %q and the end of the stream", got, err, want)
			}
		})
	}
}
