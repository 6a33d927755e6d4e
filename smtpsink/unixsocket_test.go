//go:build unix

package smtpsink

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A Unix socket left at the path by a server that is gone (a crash, kill
// -9) is taken over, as Postfix's smtp-sink does; one that a server still
// listens on, or a file that is not a socket, is left alone and Listen
// fails.
func TestUnixSocketStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the socket file stays, with nobody behind it
	s, err := Listen(t.Context(), Config{Addr: "unix:" + path})
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	go s.Serve()
	if _, err := Listen(t.Context(), Config{Addr: "unix:" + path}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Listen where a server listens: %v, want EADDRINUSE", err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the first server lost its socket: %v", err)
	}
	c.Close()
	s.Close()

	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := Listen(t.Context(), Config{Addr: "unix:" + file}); err == nil {
		t.Error("Listen over a regular file: no error")
	}
	if b, err := os.ReadFile(file); string(b) != "x" {
		t.Errorf("the regular file: %q, %v", b, err)
	}
}

// Close removes the socket file, but not once another server has taken
// the path (the file was deleted while the sink ran).
func TestUnixSocketRemoved(t *testing.T) {
	for _, engine := range []Engine{EngineGoroutine, EngineLoops} {
		path := filepath.Join(t.TempDir(), "s")
		s, err := Listen(t.Context(), Config{Addr: "unix:" + path, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		s.Close()
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the socket file after Close: %v", engine, err)
		}

		s, err = Listen(t.Context(), Config{Addr: "unix:" + path, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		os.Remove(path)
		other, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if c, err := net.Dial("unix", path); err != nil {
			t.Errorf("%v: the other server's socket after Close: %v", engine, err)
		} else {
			c.Close()
		}
		other.Close()
	}
}
