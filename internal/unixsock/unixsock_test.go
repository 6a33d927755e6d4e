//go:build !plan9

package unixsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A socket left by a listener that is gone is taken over; a live one, or
// a file that is not a socket, is not.
func TestListen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var lc net.ListenConfig

	stale := filepath.Join(dir, "stale")
	ln, err := lc.Listen(ctx, "unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // as a server killed with -9 leaves it
	ln.Close()
	ln, _, err = Listen(ctx, &lc, stale)
	if err != nil {
		t.Fatalf("a stale socket: %v, want it taken over", err)
	}
	defer ln.Close()

	if _, _, err := Listen(ctx, &lc, stale); !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "a server is listening on it") {
		t.Errorf("a live socket: %v, want EADDRINUSE, saying so", err)
	}
	if c, err := net.Dial("unix", stale); err != nil {
		t.Errorf("the live listener after the attempt: %v", err)
	} else {
		c.Close()
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	if _, _, err := Listen(ctx, &lc, file); err == nil || !strings.Contains(err.Error(), "is a regular file, not a socket") {
		t.Errorf("a regular file: %v, want an error saying so", err)
	}
	if _, _, err := Listen(ctx, &lc, dir); err == nil || !strings.Contains(err.Error(), "is a directory, not a socket") {
		t.Errorf("a directory: %v, want an error saying so", err)
	}
	long := filepath.Join(dir, strings.Repeat("x", 120))
	if _, _, err := Listen(ctx, &lc, long); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "a socket's is at most") {
		t.Errorf("a path of %d bytes: %v, want EINVAL, saying why", len(long), err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the regular file holds %q", b)
	}
}

// The socket file is removed by remove, and only while it is the one
// Listen made: not by the listener's Close, and not once another server
// listens at the path.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var lc net.ListenConfig
	path := filepath.Join(dir, "s")

	ln, remove, err := Listen(ctx, &lc, path)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("after Close: %v, want the file left for remove", err)
	}
	remove()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after remove: %v, want the file gone", err)
	}

	// The file is deleted while the server runs, and another server
	// starts at the path: the first one's remove leaves it alone.
	ln, remove, err = Listen(ctx, &lc, path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	other, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ln.Close()
	remove()
	remove()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the other server's socket after the first one's remove: %v", err)
	}
	c.Close()

	// An abstract socket has no file; remove does nothing.
	ln, remove, err = Listen(ctx, &lc, "@wirespeed-unixsock-test")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	remove()
}

// A Listen where a server listens connects to it once, not twice, to
// find that out: the server sees one connection, closed with nothing
// sent, before the test's own, which follows it in the listen queue.
func TestLiveProbedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	first, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	var lc net.ListenConfig
	if _, _, err := Listen(context.Background(), &lc, path); !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "a server is listening on it") {
		t.Fatalf("a live socket: %v, want EADDRINUSE, saying a server is listening", err)
	}
	marker, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()
	if _, err := marker.Write([]byte("m")); err != nil {
		t.Fatal(err)
	}
	probes := 0
	for {
		c, err := first.Accept()
		if err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		n, _ := c.Read(b[:])
		c.Close()
		if n == 1 {
			break // the marker
		}
		probes++
	}
	if probes != 1 {
		t.Errorf("the live server saw %d probe connections, want 1", probes)
	}

	// An abstract socket (Linux's @NAME) has no file to look at: the
	// connection alone finds its server.
	if runtime.GOOS == "linux" {
		abs, err := net.Listen("unix", "@wirespeed-unixsock-live")
		if err != nil {
			t.Fatal(err)
		}
		defer abs.Close()
		if _, _, err := Listen(context.Background(), &lc, "@wirespeed-unixsock-live"); !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "a server is listening on it") {
			t.Errorf("a live abstract socket: %v, want EADDRINUSE, saying a server is listening", err)
		}
	}
}

// An abstract socket (Linux's @NAME) has no file: a file of its name in
// the working directory is another's. Listen neither takes it for what
// holds the name (it said "@NAME is a regular file, not a socket" of a
// live abstract socket) nor removes it (remove deleted it: it was taken
// for the socket's file).
func TestAbstractNotAFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux's")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	name := fmt.Sprintf("@wirespeed-unixsock-file-%d", os.Getpid())
	if err := os.WriteFile(name, []byte("not a socket"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lc net.ListenConfig
	ln, remove, err := Listen(context.Background(), &lc, name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, _, err := Listen(context.Background(), &lc, name); !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "a server is listening on it") {
		t.Errorf("a live abstract socket beside a file of its name: %v, want EADDRINUSE, saying a server is listening", err)
	}
	remove()
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("remove of the abstract socket removed the file of its name: %v", err)
	}
}
