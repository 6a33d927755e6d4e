package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadPEM reads a file of up to MaxPEM bytes whole, and refuses a larger
// one without reading past MaxPEM+1 bytes.
func TestReadPEM(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 100, MaxPEM, MaxPEM + 1} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := ReadPEM(p)
		switch {
		case n <= MaxPEM && (err != nil || len(b) != n):
			t.Errorf("%d bytes: got %d, %v", n, len(b), err)
		case n > MaxPEM && (err == nil || !strings.Contains(err.Error(), p+": more than 16 MiB")):
			t.Errorf("%d bytes: got %d, %v", n, len(b), err)
		}
	}
	if _, err := ReadPEM(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
