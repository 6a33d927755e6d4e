//go:build unix

package sumcmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// pipeList is a check list longer than a pipe holds (64 KiB) and a stdio
// buffer: a line for a big file (still being hashed when the next lines
// are read), a line naming the pipe the list itself comes from, and 3000
// lines for plain.
func pipeList(t *testing.T, f sumFixture, pipeName string) string {
	t.Helper()
	md5 := coreutils(t, "md5sum")
	bigSum := strings.Fields(runTool(t, f.dir, "C", nil, md5, "big").stdout)[0]
	plainSum := strings.Fields(runTool(t, f.dir, "C", nil, md5, "plain").stdout)[0]
	var b strings.Builder
	b.WriteString(bigSum + "  big\n")
	b.WriteString(md5hex(nil) + "  " + pipeName + "\n")
	for range 3000 {
		b.WriteString(plainSum + "  plain\n")
	}
	return b.String()
}

// TestSumCheckListNamesItsPipe: a check list read from a pipe may name
// that pipe (a "/dev/stdin" line in `md5sum -c -`, or a FIFO that lists
// itself). md5sum reads the list through a stdio buffer (4 KiB on a
// pipe), hashes the rest of the pipe for that line, and then finds the
// list at its end: it checks only the lines of its first buffer. wirespeed
// sum does the same, byte for byte, where it used to read the list 64 KiB
// ahead and hash the pipe in parallel with reading the rest of the list,
// both sharing out its bytes.
func TestSumCheckListNamesItsPipe(t *testing.T) {
	f := newSumFixture(t)
	md5 := coreutils(t, "md5sum")

	t.Run("stdin", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		ours := fmt.Sprintf("/dev/fd/%d", pr.Fd())
		if _, err := os.Stat(ours); err != nil {
			t.Skipf("no /dev/fd: %v", err)
		}
		// md5sum's name for its standard input, as long as ours so that
		// the lines fall the same way in the buffers.
		theirs := strings.Repeat("/", len(ours)-len("/dev/fd/0")) + "/dev/fd/0"
		want := runTool(t, f.dir, "C", []byte(pipeList(t, f, theirs)), md5, "-c", "-")
		want.stdout = strings.ReplaceAll(want.stdout, theirs, ours)
		list := pipeList(t, f, ours)
		go func() {
			pw.Write([]byte(list))
			pw.Close()
		}()
		t.Chdir(f.dir)
		t.Setenv("LC_ALL", "C")
		var o, e bytes.Buffer
		code := runSum([]string{"-c", "-j", "2", "-"}, pr, &o, &e)
		sameAsCoreutils(t, "md5sum -c - (a list naming its pipe)", "md5sum", runOutput{o.String(), e.String(), code}, want)
	})

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(f.dir, "fifo")
		if err := unix.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		list := []byte(pipeList(t, f, "fifo"))
		// feed writes the list into the FIFO for one run; the returned
		// function waits for it, first letting a writer that no reader
		// met open the FIFO.
		feed := func() func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				w.Write(list)
				w.Close()
			}()
			return func() {
				if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
					r.Close()
				}
				<-done
			}
		}
		wait := feed()
		want := runTool(t, f.dir, "C", nil, md5, "-c", "fifo")
		wait()
		wait = feed()
		got := runSumIn(t, f.dir, "C", nil, "-c", "-j", "2", "fifo")
		wait()
		sameAsCoreutils(t, "md5sum -c fifo (a FIFO listing itself)", "md5sum", got, want)
	})
}
