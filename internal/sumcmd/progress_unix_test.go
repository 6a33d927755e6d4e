//go:build unix

package sumcmd

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// TestSumProgressOnSharedTerminal runs `wirespeed sum slow a b` with
// standard output and standard error on one (fake) terminal; slow is a
// FIFO that ends only once a progress line has been drawn. No checksum
// line may start on the line of the progress text: the terminal shows
// exactly the checksum lines. With -z, whose output never ends a line,
// no progress line may be drawn over it either.
func TestSumProgressOnSharedTerminal(t *testing.T) {
	for _, zero := range []bool{false, true} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
		os.WriteFile(filepath.Join(dir, "b"), []byte("bb"), 0o644)
		if err := unix.Mkfifo(filepath.Join(dir, "slow"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		t.Chdir(dir)
		tty := &tooltest.Buffer{}
		slow := make([]byte, 100)
		rand.Read(slow)
		fed := make(chan error, 1)
		go func() {
			f, err := os.OpenFile("slow", os.O_WRONLY, 0)
			if err != nil {
				fed <- err
				return
			}
			defer f.Close()
			_, err = f.Write(slow)
			for deadline := time.Now().Add(20 * time.Second); !strings.Contains(tty.String(), "files, ") && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			fed <- err
		}()
		args := []string{"slow", "a", "b"}
		end := "\n"
		if zero {
			args, end = append(args, "-z"), "\x00"
		}
		code, _ := cli.Status(run(args, nil, tty, tty, fakeTerminals(time.Millisecond, tty)))
		if err := <-fed; err != nil {
			t.Fatal(err)
		}
		out := tty.String()
		if !strings.Contains(out, "\rwirespeed sum: 0/3 files, ") {
			t.Fatalf("-z %v: no progress line: %q", zero, out)
		}
		lines := md5hex(slow) + "  slow" + end + md5hex([]byte("a")) + "  a" + end + md5hex([]byte("bb")) + "  b" + end
		want := strings.Split(lines, "\n")
		if got := screen(out); code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("-z %v: exit %d; the terminal shows\n%q\nwant\n%q\nfrom %q", zero, code, got, want, out)
		}
	}
}
