package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/serve/servetest"
)

func TestEngines(t *testing.T) { servetest.Run(t, engines(nil)) }

// The engines are served with serve's flags; an event loop refuses
// -delay, and the engines of wirespeed's own module are not served here.
func TestRunEngines(t *testing.T) {
	for _, engine := range serve.CompareEngines() {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- serve.RunEngines(ctx, "wirespeed-compare", []string{"-engine", engine, "-mode", "line", "-addr", "127.0.0.1:0"}, engines(nil), pw, io.Discard)
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
				t.Fatalf("first line %q, %v", line, err)
			}
			c, err := net.Dial("tcp", strings.TrimSpace(strings.TrimPrefix(line, "listening on ")))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			if got, err := bufio.NewReader(c).ReadString('\n'); got != "ping\n" || err != nil {
				t.Fatalf("answer %q, %v", got, err)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, bad := range []serve.Config{
		{Engine: "gnet", Mode: "line", Addr: "127.0.0.1:0", Delay: time.Millisecond},
		{Engine: "std", Mode: "line", Addr: "127.0.0.1:0"},
	} {
		if _, err := serve.Start(bad, engines(nil)); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// gnet's Fatalf does not end the process: it stops the engine, and Serve
// returns the failure.
func TestGnetFatal(t *testing.T) {
	loggers := make(chan *gnetLogger, 1)
	var logged bytes.Buffer
	var mu sync.Mutex
	cfg := serve.Config{Engine: "gnet", Mode: "echo", Addr: "127.0.0.1:0", ErrorLog: log.New(lockedWriter{&mu, &logged}, "", 0)}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(context.Background(), cfg, engines(func(l *gnetLogger) { loggers <- l }), pw)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	l := <-loggers
	l.Fatalf("poller: %s", "broken")
	err = <-done
	if !errors.Is(err, ErrFatal) || !strings.Contains(err.Error(), "gnet: poller: broken") {
		t.Fatalf("Serve returned %v, want the engine's failure", err)
	}
	mu.Lock()
	if !strings.Contains(logged.String(), "poller: broken") {
		t.Errorf("failure not logged: %q", logged.String())
	}
	mu.Unlock()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("still accepting after the failure")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Every engine starts on a port that a connection the server closed
// first holds in TIME-WAIT, as a restart meets: gnet did not, for a
// minute ("bind: address already in use"), where evio and netpoll did.
func TestEnginesRebind(t *testing.T) {
	for _, engine := range serve.CompareEngines() {
		t.Run(engine, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			sc.Close() // the server's side closes first: TIME-WAIT on addr
			io.Copy(io.Discard, c)
			c.Close()
			ln.Close()
			s, err := serve.Start(serve.Config{Engine: engine, Mode: "echo", Addr: addr}, engines(nil))
			if err != nil {
				t.Fatalf("start on %s: %v", addr, err)
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
