package sumcmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// screen is what a terminal shows after the bytes of out: '\r' goes back
// to the start of the line, "\x1b[K" erases from the cursor to the end of
// the line, '\n' goes to the start of the next one (onlcr), and any other
// byte overwrites the one under the cursor.
func screen(out string) []string {
	lines := [][]byte{nil}
	col := 0
	for i := 0; i < len(out); i++ {
		cur := &lines[len(lines)-1]
		switch {
		case out[i] == '\r':
			col = 0
		case out[i] == '\n':
			lines = append(lines, nil)
			col = 0
		case strings.HasPrefix(out[i:], "\x1b[K"):
			*cur = (*cur)[:col]
			i += len("\x1b[K") - 1
		default:
			if col < len(*cur) {
				(*cur)[col] = out[i]
			} else {
				*cur = append(*cur, out[i])
			}
			col++
		}
	}
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = string(l)
	}
	return s
}

func TestScreen(t *testing.T) {
	got := screen("\rprogress\x1b[Kabc\n\rxy\x1b[K\r\x1b[Kdef\nab\rX")
	if want := []string{"progressabc", "def", "Xb"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSumProgressClearedBeforeStdout drives the meter directly: with both
// streams on one terminal, a progress line showing is erased before a
// checksum line goes out, and drawn again below it.
func TestSumProgressClearedBeforeStdout(t *testing.T) {
	tty := &tooltest.Buffer{}
	r := newSumRun(sumConfig{alg: digest.MD5, files: []string{"a", "b"}}, nil, tty, tty, fakeTerminals(time.Second, tty))
	r.meter = &progressMeter{r: r, w: tty, done: make(chan struct{})}
	sum, err := digest.Reader(digest.MD5, strings.NewReader("a"))
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.meter.draw(r.meter.start.Add(2e9))
	r.printed(event{kind: evFile, name: "a"}, sum, nil)
	r.meter.stop()
	r.mu.Unlock()
	out := tty.String()
	progress, _, _ := strings.Cut(out, "\x1b[K")
	line := md5hex([]byte("a")) + "  a\n"
	want := progress + "\x1b[K" + "\r\x1b[K" + line + progress + "\x1b[K" + "\r\x1b[K"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
	if s := screen(out); len(s) != 2 || s[0] != line[:len(line)-1] || s[1] != "" {
		t.Errorf("the terminal shows %q", s)
	}
}

// errWriter fails every write after its first ok ones.
type errWriter struct {
	ok     int
	err    error
	writes int
	buf    bytes.Buffer
}

func (w *errWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.ok {
		return 0, w.err
	}
	return w.buf.Write(p)
}

// TestSumWriteError: a write error on standard output, whether at the
// first flush, a later one or the final one, is reported once, after the
// other diagnostics, and the exit status is 1, as coreutils' close_stdout
// does. --help and --version fail the same way.
func TestSumWriteError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	t.Chdir(dir)
	enospc := "wirespeed sum: write error\n" // md5sum 9.1's, as TestSumDevFull checks
	for _, ok := range []int{0, 1} {
		w := &errWriter{ok: ok, err: &os.PathError{Op: "write", Path: "/dev/stdout", Err: errNoSpace}}
		var stderr bytes.Buffer
		code := runSum([]string{"a", "nosuch", "a"}, nil, w, &stderr)
		want := "wirespeed sum: nosuch: No such file or directory\n" + enospc
		if code != 1 || stderr.String() != want {
			t.Errorf("%d writes succeed: exit %d, stderr %q, want 1, %q", ok, code, stderr.String(), want)
		}
		if ok == 1 && w.buf.String() != md5hex([]byte("a"))+"  a\n" {
			t.Errorf("%d writes succeed: stdout %q", ok, w.buf.String())
		}
	}
	for _, args := range [][]string{{"--help"}, {"--version"}, {"a"}} {
		w := &errWriter{err: errNoSpace}
		var stderr bytes.Buffer
		if code := runSum(args, nil, w, &stderr); code != 1 || stderr.String() != enospc {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	// A closed *os.File is a closed descriptor to coreutils.
	closed, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var stderr bytes.Buffer
	if code := runSum([]string{"a"}, nil, closed, &stderr); code != 1 || stderr.String() != "wirespeed sum: write error: Bad file descriptor\n" {
		t.Errorf("closed stdout: exit %d, stderr %q", code, stderr.String())
	}
}

// TestSumDevFull writes to /dev/full, as `wirespeed sum a > /dev/full`.
func TestSumDevFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no /dev/full")
	} else if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	t.Chdir(dir)
	md5sum := coreutils(t, "md5sum")
	for _, args := range [][]string{{"a"}, {"a", "a", "a"}, {"-c", "-"}, {"--help"}} {
		check := md5hex([]byte("a")) + "  a\n"
		var stderr, want bytes.Buffer
		code := runSum(args, strings.NewReader(check), full, &stderr)
		cmd := exec.Command(md5sum, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(check), full, &want
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("md5sum %q > /dev/full: %v, want it to fail", args, err)
		}
		if w := strings.ReplaceAll(want.String(), md5sum+":", "wirespeed sum:"); code != ee.ExitCode() || stderr.String() != w {
			t.Errorf("%q > /dev/full: exit %d, stderr %q; md5sum's %d, %q", args, code, stderr.String(), ee.ExitCode(), w)
		}
	}
}

// TestSumHelpOptions: -h and -help (-h, then letters never read) print
// the usage as --help does.
func TestSumHelpOptions(t *testing.T) {
	dir := t.TempDir()
	want := runSumIn(t, dir, "C", nil, "--help")
	if want.code != 0 || !strings.HasPrefix(want.stdout, "Usage: wirespeed sum") || want.stderr != "" {
		t.Fatalf("--help: %+v", want)
	}
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--h"}, {"-c", "-help"}, {"nosuch", "-h"}, {"-hx"}} {
		if got := runSumIn(t, dir, "C", nil, args...); got != want {
			t.Errorf("%q: %+v", args, got)
		}
	}
}
