package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/netio"
)

// timeoutCase is an engine configuration the timeout tests run on.
type timeoutCase struct {
	name string
	cfg  Config
	h    *hooks
}

func timeoutCases(t *testing.T, mode string) []timeoutCase {
	t.Helper()
	cert, err := selfsigned.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	var cs []timeoutCase
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"std", Config{Engine: "std"}},
		{"netio-conn", Config{Engine: "netio-conn"}},
		{"netio", Config{Engine: "netio"}},
		{"std/delay", Config{Engine: "std", Delay: time.Hour}},
		{"netio-conn/delay", Config{Engine: "netio-conn", Delay: time.Hour}},
		{"std/tls", Config{Engine: "std", TLS: tlsCfg}},
		{"std/tls/delay", Config{Engine: "std", TLS: tlsCfg, Delay: time.Hour}},
		{"netio/tls", Config{Engine: "netio", TLS: tlsCfg}},
	} {
		c.cfg.Mode = mode
		h := &hooks{}
		if c.cfg.Delay > 0 {
			h.until = func(time.Time) {} // -delay's responses are due at once
		}
		cs = append(cs, timeoutCase{c.name, c.cfg, h})
	}
	return cs
}

// dialCase connects to s as a client of tc (over TLS with tc.cfg.TLS),
// returning the connection and the TCP connection under it.
func dialCase(t *testing.T, s *Server, tc timeoutCase) (c, raw net.Conn) {
	t.Helper()
	raw, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	if tc.cfg.TLS != nil {
		return tls.Client(raw, &tls.Config{InsecureSkipVerify: true}), raw
	}
	return raw, raw
}

// ended returns a hook for connDone and the channel it closes when the
// first connection's goroutines have ended.
func ended(h *hooks) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	h.connDone = func() { once.Do(func() { close(done) }) }
	return done
}

// A client that connects and sends nothing is closed by the idle timeout,
// and (std, netio-conn) its goroutines end: std and netio-conn had no
// timeout, and held both forever, and the netio engine had netio's 5
// minutes whatever Config said. With -tls the client never sends its
// ClientHello. The test waits for the end of the stream with no bound of
// its own. (A client silent after requests is not tried here: the
// requests would have to beat the short timeout. TestServeDeadlineRefresh
// checks the deadlines that reads after requests get.)
func TestServeIdleTimeout(t *testing.T) {
	for _, tc := range timeoutCases(t, "line") {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.IdleTimeout = 20 * time.Millisecond
			tc.cfg.WriteTimeout = -1
			done := ended(tc.h)
			s := startT(t, tc.cfg, tc.h)
			defer s.Stop()
			_, raw := dialCase(t, s, tc) // no handshake either
			if b, err := io.ReadAll(raw); len(b) != 0 {
				t.Fatalf("read %q, %v; want the end of the stream", b, err)
			}
			if tc.cfg.Engine != "netio" {
				<-done
			}
		})
	}
}

// A client that sends and never reads fills the socket buffers and the
// server's writes wait: the write timeout closes the connection (the
// client's writes then fail) and (std, netio-conn) the connection's
// goroutines end. std and netio-conn had no write timeout: their Write
// waited forever. The idle timeout is off, so that only the write
// timeout can end it.
func TestServeWriteTimeout(t *testing.T) {
	for _, tc := range timeoutCases(t, "echo") {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.IdleTimeout = -1
			tc.cfg.WriteTimeout = 20 * time.Millisecond
			done := ended(tc.h)
			s := startT(t, tc.cfg, tc.h)
			defer s.Stop()
			c, _ := dialCase(t, s, tc)
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for {
				if _, err := c.Write(chunk); err != nil {
					break // closed by the server
				}
			}
			if tc.cfg.Engine != "netio" {
				<-done
			}
		})
	}
}

// A deadlineConn records the deadlines set on it (SetDeadline as both),
// and sets them.
type deadlineConn struct {
	net.Conn
	mu          sync.Mutex
	read, write []time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read, c.write = append(c.read, t), append(c.write, t)
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = append(c.read, t)
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.write = append(c.write, t)
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *deadlineConn) sets() (read, write []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.read), slices.Clone(c.write)
}

// A deadlineListener wraps what it accepts in deadlineConns and sends
// them on conns.
type deadlineListener struct {
	net.Listener
	conns chan *deadlineConn
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{Conn: c}
	l.conns <- dc
	return dc, nil
}

// recordDeadlines sets h to wrap the accepted connections in
// deadlineConns, which it returns on the channel.
func recordDeadlines(h *hooks) <-chan *deadlineConn {
	conns := make(chan *deadlineConn, 1)
	h.listener = func(ln net.Listener) net.Listener { return &deadlineListener{ln, conns} }
	return conns
}

// The deadlines move only every quarter of a timeout, each set 1.25
// times it ahead (so every read and write has between the timeout and
// 1.25 times it), on the clock hook; a TLS handshake has its own bound,
// netio.DefaultHandshakeTimeout, cleared once it is done.
func TestServeDeadlineRefresh(t *testing.T) {
	const T = time.Hour
	for _, tc := range timeoutCases(t, "line") {
		if tc.cfg.Engine == "netio" {
			continue // LoopOptions': TestServeTimeoutsOff
		}
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			t0 := time.Now() // the deadlines are set for real: far ahead
			now := t0
			tc.h.clock = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return now
			}
			advance := func(d time.Duration) {
				mu.Lock()
				now = now.Add(d)
				mu.Unlock()
			}
			conns := recordDeadlines(tc.h)
			tc.cfg.IdleTimeout, tc.cfg.WriteTimeout = T, T
			s := startT(t, tc.cfg, tc.h)
			defer s.Stop()
			c, _ := dialCase(t, s, tc)
			r := bufio.NewReader(c)
			exchange := func(line string) {
				t.Helper()
				if _, err := c.Write([]byte(line)); err != nil {
					t.Fatal(err)
				}
				if got, err := r.ReadString('\n'); got != line {
					t.Fatalf("read %q, %v; want %q", got, err, line)
				}
			}
			exchange("a\n")
			exchange("b\n")
			advance(T/4 - 1)
			exchange("c\n")
			advance(1)
			exchange("d\n")
			exchange("e\n") // its read follows the one after d's write
			read, write := (<-conns).sets()
			want := []time.Time{t0.Add(T + T/4), t0.Add(T/4 + T + T/4)}
			if tc.cfg.TLS != nil {
				want = append([]time.Time{t0.Add(netio.DefaultHandshakeTimeout), {}}, want...)
			}
			if !slices.EqualFunc(read, want, time.Time.Equal) || !slices.EqualFunc(write, want, time.Time.Equal) {
				t.Errorf("read deadlines %v,\nwrite deadlines %v;\nwant %v for both", rel(t0, read), rel(t0, write), rel(t0, want))
			}
		})
	}
}

// rel prints deadlines as offsets from t0.
func rel(t0 time.Time, ts []time.Time) string {
	var s []string
	for _, t := range ts {
		if t.IsZero() {
			s = append(s, "none")
		} else {
			s = append(s, "+"+t.Sub(t0).String())
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}

// A negative timeout (0 on the command line) is none: std and netio-conn
// leave no deadline in force on the connection (with TLS, the
// handshake's is cleared), and the netio engine's LoopOptions get the
// negative value, which means none there too.
func TestServeTimeoutsOff(t *testing.T) {
	for _, tc := range timeoutCases(t, "line") {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.IdleTimeout, tc.cfg.WriteTimeout = -1, -1
			if tc.cfg.Engine == "netio" {
				if o := loopOptions(tc.cfg); o.IdleTimeout >= 0 || o.WriteTimeout >= 0 {
					t.Fatalf("LoopOptions timeouts %v, %v; want negative (none)", o.IdleTimeout, o.WriteTimeout)
				}
				return
			}
			conns := recordDeadlines(tc.h)
			s := startT(t, tc.cfg, tc.h)
			defer s.Stop()
			c, _ := dialCase(t, s, tc)
			r := bufio.NewReader(c)
			for _, line := range []string{"a\n", "b\n"} {
				c.Write([]byte(line))
				if got, err := r.ReadString('\n'); got != line {
					t.Fatalf("read %q, %v; want %q", got, err, line)
				}
			}
			read, write := (<-conns).sets()
			for _, ds := range [][]time.Time{read, write} {
				if len(ds) > 0 && !ds[len(ds)-1].IsZero() {
					t.Errorf("deadlines set %v, %v; want none in force", read, write)
				}
			}
		})
	}
	// The defaults are netio's, in Config and on the netio engine.
	if o := loopOptions(Config{}); o.IdleTimeout != 0 || o.WriteTimeout != 0 {
		t.Errorf("LoopOptions timeouts %v, %v for Config's 0; want 0 (netio's defaults)", o.IdleTimeout, o.WriteTimeout)
	}
	d := newDeadlines(nil, nil, &Config{}, &hooks{})
	if d.idle != netio.DefaultIdleTimeout || d.write != netio.DefaultWriteTimeout {
		t.Errorf("std's timeouts %v, %v for Config's 0; want netio's defaults", d.idle, d.write)
	}
}

// A timeout too long to matter (the largest Duration) is none in effect:
// the deadlines are set far ahead, not in the past, where T+T/4 would
// have wrapped.
func TestServeHugeTimeouts(t *testing.T) {
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			h := &hooks{}
			conns := recordDeadlines(h)
			s := startT(t, Config{Engine: engine, Mode: "line", IdleTimeout: math.MaxInt64, WriteTimeout: math.MaxInt64}, h)
			defer s.Stop()
			start := time.Now()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte("a\n"))
			if got, err := bufio.NewReader(c).ReadString('\n'); got != "a\n" {
				t.Fatalf("read %q, %v", got, err)
			}
			read, write := (<-conns).sets()
			for _, d := range append(read, write...) {
				if d.Before(start.Add(100 * 365 * 24 * time.Hour)) {
					t.Errorf("deadline %v, want one more than 100 years ahead", d)
				}
			}
			if len(read) == 0 || len(write) == 0 {
				t.Errorf("deadlines %v, %v; want each set", read, write)
			}
		})
	}
}

// -idle-timeout and -write-timeout: netio's defaults, 0 turns them off
// (a negative Config value), a negative one is a usage error; the
// comparison engines refuse any value but the default, naming the flag.
func TestServeTimeoutFlags(t *testing.T) {
	for _, c := range []struct {
		args        []string
		idle, write time.Duration
	}{
		{nil, 0, 0},
		{[]string{"-idle-timeout", "0", "-write-timeout", "0"}, -1, -1},
		{[]string{"-idle-timeout", "5m", "-write-timeout", "60s"}, 0, 0},
		{[]string{"-idle-timeout", "1m", "-write-timeout", "5m"}, time.Minute, 5 * time.Minute},
	} {
		fs, cfg := flags("serve", "std", io.Discard)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if cfg.IdleTimeout != c.idle || cfg.WriteTimeout != c.write {
			t.Errorf("%q: Config timeouts %v, %v; want %v, %v", c.args, cfg.IdleTimeout, cfg.WriteTimeout, c.idle, c.write)
		}
		// Args gives the comparison binary or serve what selects cfg.
		cfg.Engine, cfg.Mode, cfg.Addr = "std", "echo", "127.0.0.1:0"
		fs2, cfg2 := flags("serve", "std", io.Discard)
		if err := fs2.Parse(Args(*cfg)); err != nil || *cfg2 != *cfg {
			t.Errorf("%q: Args %q parse to %+v, %v", c.args, Args(*cfg), *cfg2, err)
		}
		for _, engine := range CompareEngines() {
			cfg.Engine = engine
			err := check(*cfg, map[string]Engine{engine: nil})
			if c.idle == 0 && c.write == 0 {
				if err != nil {
					t.Errorf("%s %q: %v", engine, c.args, err)
				}
			} else if err == nil {
				t.Errorf("%s %q: no error", engine, c.args)
			}
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		args []string
		want string // in the error, or in stderr for the flag package's
	}{
		{[]string{"-idle-timeout", "-1s"}, "-idle-timeout"},
		{[]string{"-write-timeout", "-1s"}, "-write-timeout"},
		{[]string{"-write-timeout", "soon"}, "-write-timeout"},
		{[]string{"-engine", "gnet", "-idle-timeout", "1m", "-compare-exe", "/nonexistent"}, "-idle-timeout"},
		{[]string{"-engine", "evio", "-idle-timeout", "0", "-compare-exe", "/nonexistent"}, "-idle-timeout"},
		{[]string{"-engine", "netpoll", "-write-timeout", "2m", "-compare-exe", "/nonexistent"}, "-write-timeout"},
	} {
		var stderr bytes.Buffer
		err := Run(done, append([]string{"-addr", "127.0.0.1:0"}, c.args...), io.Discard, &stderr)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err)+stderr.String(), c.want) {
			t.Errorf("serve %q: %v (status %d, stderr %q), want a usage error naming %s", c.args, err, status, stderr.String(), c.want)
		}
	}
	// The default given explicitly is not refused.
	err := Run(done, []string{"-addr", "127.0.0.1:0", "-engine", "gnet", "-idle-timeout", "5m", "-write-timeout", "1m", "-compare-exe", "/nonexistent"}, io.Discard, io.Discard)
	if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "-compare-exe") {
		t.Errorf("serve -engine gnet with the default timeouts: %v, want only -compare-exe refused", err)
	}
}
