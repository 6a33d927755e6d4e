package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// An Output leaves an earlier file alone until the first Write, and a
// file it made but never wrote is removed at Close; Abort removes what
// the run wrote or made, and never a file that is not a regular one.
func TestOutput(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	reset := func() { os.WriteFile(old, []byte("an earlier run"), 0o644) }

	reset()
	o, err := CreateOutput(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(old); got != "an earlier run" {
		t.Errorf("opened: %q", got)
	}
	o.Write([]byte("new"))
	o.Write([]byte(" run"))
	o.Close()
	if got := read(old); got != "new run" {
		t.Errorf("written: %q, want the new run alone", got)
	}

	reset()
	o, _ = CreateOutput(old)
	o.Close()
	if got := read(old); got != "an earlier run" {
		t.Errorf("closed unwritten: %q, want the earlier run", got)
	}
	made := filepath.Join(dir, "made")
	o, _ = CreateOutput(made)
	o.Close()
	if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("made, closed unwritten: %v, want no file", err)
	}

	o, _ = CreateOutput(old)
	o.Abort()
	if got := read(old); got != "an earlier run" {
		t.Errorf("aborted unwritten: %q, want the earlier run", got)
	}
	o, _ = CreateOutput(old)
	o.Write([]byte("half"))
	o.Abort()
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("aborted after a write: %v, want no file", err)
	}

	if _, err := os.Stat("/dev/full"); err == nil {
		o, err := CreateOutput("/dev/full")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Write([]byte("x")); err == nil {
			t.Error("a write to /dev/full: no error")
		}
		o.Abort()
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Fatalf("/dev/full after Abort: %v", err)
		}
	}
}
