//go:build unix

package smtpsinkcmd

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A -digest-log that is a FIFO with no reader yet does not hold the sink
// up: it is opened for reading too, as os.Create opens (a write-only open
// waits for a reader, before "listening on", deaf to signals).
func TestRunDigestLogFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "digests")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, stop := run(t, "-digest", "md5", "-digest-log", fifo) // returns once "listening on" is printed
	if _, err := stop(); err != nil {
		t.Error(err)
	}
}
