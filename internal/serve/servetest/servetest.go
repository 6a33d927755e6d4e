// Package servetest checks engines of `wirespeed serve` (serve.Engine):
// what each must do, for this module's engines and the comparison
// module's alike.
package servetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/serve"
)

// Run checks each of engines in subtests named ENGINE/echo, ENGINE/line
// and ENGINE/long-line. Each engine must start on 127.0.0.1 port 0, answer
// echo and pipelined line requests correctly from several connections at
// once, and stop cleanly: Stop returns only once the engine has ended,
// after which nothing accepts on its address. A line longer than
// serve.MaxLine closes the connection instead of growing a buffer.
func Run(t *testing.T, engines map[string]serve.Engine) {
	for _, engine := range slices.Sorted(maps.Keys(engines)) {
		for _, mode := range []string{"echo", "line"} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				s := Start(t, serve.Config{Engine: engine, Mode: mode}, engines)
				var wg sync.WaitGroup
				for c := 0; c < 4; c++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := exchange(s.Addr(), c); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if err := s.Stop(); err != nil {
					t.Fatalf("stop: %v", err)
				}
				if c, err := net.Dial("tcp", s.Addr()); err == nil {
					c.Close()
					t.Fatal("still accepting after stop")
				}
			})
		}
		t.Run(engine+"/half-close", func(t *testing.T) {
			halfClose(t, engine, engines)
		})
		t.Run(engine+"/long-line", func(t *testing.T) {
			s := Start(t, serve.Config{Engine: engine, Mode: "line"}, engines)
			defer s.Stop()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go c.Write(bytes.Repeat([]byte("y"), 4*serve.MaxLine))
			// The server closes with unread data, which resets the
			// connection: either ends the copy.
			if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
				t.Error(err)
			}
		})
		// A whole line one byte too long, sent at once, is not answered
		// either (netio's loops echoed one that came with its end before
		// the loop found more than serve.MaxLine bytes unused); one of
		// serve.MaxLine bytes is.
		t.Run(engine+"/line-limit", func(t *testing.T) {
			s := Start(t, serve.Config{Engine: engine, Mode: "line"}, engines)
			defer s.Stop()
			for _, n := range []int{serve.MaxLine, serve.MaxLine + 1} {
				c, err := net.Dial("tcp", s.Addr())
				if err != nil {
					t.Fatal(err)
				}
				line := append(bytes.Repeat([]byte("z"), n-1), '\n')
				fits := n <= serve.MaxLine
				go func() {
					c.Write(line)
					if !fits {
						// The end of input makes an engine that
						// echoes the line close after it. (No
						// half-close for the line that fits:
						// netpoll drops input before one.)
						c.(*net.TCPConn).CloseWrite()
					}
				}()
				got := make([]byte, n)
				if fits {
					_, err = io.ReadFull(c, got)
				} else {
					got, err = io.ReadAll(c)
				}
				if err != nil && !isReset(err) {
					t.Error(err)
				}
				if bytes.Equal(got, line) != fits {
					t.Errorf("a line of %d bytes: answered %d bytes, want the line %v", n, len(got), fits)
				}
				c.Close()
			}
		})
		t.Run(engine+"/listen-errors", func(t *testing.T) {
			listenErrors(t, engine, engines)
		})
	}
}

// listenErrors checks that an engine that cannot listen on its -addr
// says so naming the flag, with the exit status cli.ListenError gives:
// 2 for an address no run of the command can listen on (a host that
// does not exist, an address not this host's), 1 for one in use. Every
// engine listens its own way (gnet, evio and netpoll without serve's
// help), and they named the flag for some failures and not others.
func listenErrors(t *testing.T, engine string, engines map[string]serve.Engine) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := []struct {
		addr   string
		status int
	}{
		// A name with a space: no resolver asks a server about it.
		{"no such host.invalid:0", 2},
		{busy.Addr().String(), 1},
	}
	// TEST-NET-1 (RFC 5737), unless this host has it.
	if ln, err := net.Listen("tcp", "192.0.2.1:0"); err == nil {
		ln.Close()
		t.Log("192.0.2.1 is this host's: not tried")
	} else {
		cases = append(cases, struct {
			addr   string
			status int
		}{"192.0.2.1:0", 2})
	}
	for _, c := range cases {
		s, err := serve.Start(serve.Config{Engine: engine, Mode: "echo", Addr: c.addr, ErrorLog: log.New(io.Discard, "", 0)}, engines)
		if err == nil {
			s.Stop()
			t.Errorf("-addr %s: started", c.addr)
			continue
		}
		want := fmt.Sprintf("-addr %q: ", c.addr)
		status, _ := cli.Status(err)
		if !strings.HasPrefix(err.Error(), want) || status != c.status || errors.Is(err, cli.ErrUsage) != (c.status == 2) {
			t.Errorf("-addr %s: %v (exit status %d), want %q in front and exit status %d", c.addr, err, status, want, c.status)
		}
	}
}

// Start starts cfg on engines, or ends the test. Where cfg leaves them
// unset, the server listens on 127.0.0.1 port 0 and its log lines are
// discarded.
func Start(t *testing.T, cfg serve.Config, engines map[string]serve.Engine) *serve.Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = log.New(io.Discard, "", 0)
	}
	s, err := serve.Start(cfg, engines)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exchange sends 200 pipelined lines in uneven writes and checks that the
// same bytes come back.
func exchange(addr string, id int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var want bytes.Buffer
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&want, "conn %d request %d %s\n", id, i, strings.Repeat("x", i%50))
	}
	go func() {
		b := want.Bytes()
		for len(b) > 0 { // split lines across writes
			n := min(len(b), 97)
			c.Write(b[:n])
			b = b[n:]
		}
	}()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("conn %d: %v", id, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("conn %d: response differs from the requests", id)
	}
	return nil
}

// halfClose: a client that shuts down its writing side after a line and
// a part of one is not left waiting: the engine closes the connection,
// having answered the line or not (netpoll drops it, see docs/netio.md),
// in both modes. The read deadline only ends a hang.
func halfClose(t *testing.T, engine string, engines map[string]serve.Engine) {
	for _, mode := range []string{"echo", "line"} {
		for _, sent := range []string{"one\nabc", "abc"} {
			s := Start(t, serve.Config{Engine: engine, Mode: mode}, engines)
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte(sent))
			c.(*net.TCPConn).CloseWrite()
			c.SetReadDeadline(time.Now().Add(time.Minute))
			got, err := io.ReadAll(c)
			want := sent
			if mode == "line" {
				want = sent[:strings.LastIndexByte(sent, '\n')+1]
			}
			if err != nil && !isReset(err) || !strings.HasPrefix(want, string(got)) {
				t.Errorf("%s mode, %q sent and half-closed: %q back, %v; want a prefix of %q and the end", mode, sent, got, err, want)
			}
			c.Close()
			s.Stop()
		}
	}
}
