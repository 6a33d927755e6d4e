package smtpsourcecmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wirespeed/wirespeed/smtpsink"
)

// TestFileMemory: smtp-source -F holds its messages once: an mbox or a
// file of LF lines is CRLF-ended as it is loaded, in the buffer it is
// read into, and the run sends from it, so going from N bytes of file to
// 2N the command allocates about N more (1.03 N, 1.04 N for the mbox).
// Before 2026-12-06 it kept the loaded messages and the run a CRLF copy
// of them: 2.03 N more for the file, 6.66 N for the mbox (SplitMbox
// appended each message up apart), 2.06 N with LoadMessages as it is now.
func TestFileMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	srv, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	const length = 8 << 20
	line := []byte("a line of the body, as mail has them, under eighty characters\n")
	for _, mbox := range []bool{false, true} {
		alloc := func(n int) uint64 {
			var b []byte
			for len(b) < n {
				if mbox || len(b) == 0 {
					b = append(b, "From x Thu Dec  3 10:00:00 2026\nSubject: s\n\n"...)
				}
				b = append(b, bytes.Repeat(line, 1000)...)
				if mbox {
					b = append(b, '\n')
				}
			}
			if !mbox {
				b = b[len("From x Thu Dec  3 10:00:00 2026\n"):] // a message, not an mbox
			}
			path := filepath.Join(t.TempDir(), "m")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			b = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := Run(context.Background(), []string{"-F", path, "-m", "4", "-q", srv.Addr().String()}, io.Discard, io.Discard)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		one, two := alloc(length), alloc(2*length)
		copies := float64(int64(two)-int64(one)) / length
		if copies > 1.25 {
			t.Errorf("mbox %v: %.2f copies of the file", mbox, copies)
		}
		t.Logf("mbox %v: %.2f copies of the file", mbox, copies)
	}
}
