package unixsock

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
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
	ln, err = Listen(ctx, &lc, stale)
	if err != nil {
		t.Fatalf("a stale socket: %v, want it taken over", err)
	}
	defer ln.Close()

	if _, err := Listen(ctx, &lc, stale); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("a live socket: %v, want EADDRINUSE", err)
	}
	if c, err := net.Dial("unix", stale); err != nil {
		t.Errorf("the live listener after the attempt: %v", err)
	} else {
		c.Close()
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	if _, err := Listen(ctx, &lc, file); err == nil {
		t.Error("a regular file: listened on")
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the regular file holds %q", b)
	}
}
