package serve_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/serve/servetest"
)

// TestNetioConns: the netio engine echoes 200 connections at once
// exactly, in both modes. Under the build tag netio_portable (as CI runs
// it, and off Linux) it is netio's portable Serve that serves them.
func TestNetioConns(t *testing.T) {
	const conns = 200
	for _, mode := range []string{"echo", "line"} {
		t.Run(mode, func(t *testing.T) {
			s := servetest.Start(t, serve.Config{Engine: "netio", Mode: mode}, serve.Builtin())
			defer s.Stop()
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			for id := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- echoLines(s.Addr(), id)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// echoLines sends 100 lines in uneven writes on one connection and
// checks that the same bytes come back.
func echoLines(addr string, id int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var want bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&want, "conn %d line %d %s\n", id, i, strings.Repeat("z", (i*7+id)%80))
	}
	go func() {
		for b := want.Bytes(); len(b) > 0; {
			n := min(len(b), 61+id%40)
			if _, err := c.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
	}()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("conn %d: %v", id, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("conn %d: the echo differs from what was sent", id)
	}
	return nil
}
