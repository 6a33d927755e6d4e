package sumcmd

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
)

// These tests need no coreutils: the oracle is crypto/*.

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func TestSumOutputFormat(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"a b": []byte("x"), "back\\slash": []byte("y"), "new\nline": []byte("z"), "plain": nil}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := runSumIn(t, dir, "C", []byte("in"), "plain", "a b", "back\\slash", "new\nline", "-", "nosuch")
	want := md5hex(nil) + "  plain\n" +
		md5hex([]byte("x")) + "  a b\n" +
		"\\" + md5hex([]byte("y")) + "  back\\\\slash\n" +
		"\\" + md5hex([]byte("z")) + "  new\\nline\n" +
		md5hex([]byte("in")) + "  -\n"
	if got.stdout != want || got.code != 1 || got.stderr != "wirespeed sum: nosuch: No such file or directory\n" {
		t.Errorf("got %+v\nwant stdout %q", got, want)
	}
	got = runSumIn(t, dir, "C", nil, "--tag", "-a", "sha256", "new\nline")
	s := sha256.Sum256([]byte("z"))
	if want := "\\SHA256 (new\\nline) = " + hex.EncodeToString(s[:]) + "\n"; got.stdout != want || got.code != 0 {
		t.Errorf("--tag: got %+v, want %q", got, want)
	}
	got = runSumIn(t, dir, "C", nil, "-z", "-b", "new\nline")
	if want := md5hex([]byte("z")) + " *new\nline\x00"; got.stdout != want {
		t.Errorf("-z -b: got %q, want %q", got.stdout, want)
	}
}

// TestSumCheckRoundTrip writes checksums with `wirespeed sum` and checks
// them back, then corrupts a file and removes another.
func TestSumCheckRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 60 {
		name := fmt.Sprintf("f%02d\n%d", i, i) // newlines force escaping
		data := bytes.Repeat([]byte{byte(i)}, i*7000)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	for _, alg := range []string{"md5", "sha1", "sha512"} {
		sums := runSumIn(t, dir, "C", nil, append([]string{"-a", alg}, names...)...)
		if sums.code != 0 {
			t.Fatalf("%s: %+v", alg, sums)
		}
		check := runSumIn(t, dir, "C", []byte(sums.stdout), "-a", alg, "-c", "--quiet")
		if check.code != 0 || check.stdout != "" || check.stderr != "" {
			t.Fatalf("%s: clean check: %+v", alg, check)
		}
	}
	sums := runSumIn(t, dir, "C", nil, names...)
	os.WriteFile(filepath.Join(dir, names[3]), []byte("changed"), 0o644)
	os.Remove(filepath.Join(dir, names[5]))
	check := runSumIn(t, dir, "C", []byte(sums.stdout), "-c", "--quiet")
	wantOut := "\\f03\\n3: FAILED\n\\f05\\n5: FAILED open or read\n"
	wantErr := "wirespeed sum: 'f05'$'\\n''5': No such file or directory\n" +
		"wirespeed sum: WARNING: 1 listed file could not be read\n" +
		"wirespeed sum: WARNING: 1 computed checksum did NOT match\n"
	if check.code != 1 || check.stdout != wantOut || check.stderr != wantErr {
		t.Errorf("got %+v\nwant %q / %q", check, wantOut, wantErr)
	}
	status := runSumIn(t, dir, "C", []byte(sums.stdout), "-c", "--status", "--ignore-missing")
	if status.code != 1 || status.stdout != "" || status.stderr != "" {
		t.Errorf("--status: %+v", status)
	}
}

// TestSumInterleaving checks that stdout and stderr lines keep the order
// coreutils gives them when both go to the same place.
func TestSumInterleaving(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	var both bytes.Buffer
	t.Chdir(dir)
	code := runSum([]string{"a", "nosuch", "a", "."}, nil, &both, &both)
	if want := interleaved(); code != 1 || both.String() != want {
		t.Errorf("got %d %q\nwant %q", code, both.String(), want)
	}
}

func interleaved() string {
	return md5hex([]byte("a")) + "  a\n" +
		"wirespeed sum: nosuch: No such file or directory\n" +
		md5hex([]byte("a")) + "  a\n" +
		"wirespeed sum: .: Is a directory\n"
}

// TestSumInterleavingMatchesCoreutils checks that the order above is
// md5sum's.
func TestSumInterleavingMatchesCoreutils(t *testing.T) {
	path := coreutils(t, "md5sum")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	cmd := exec.Command(path, "a", "nosuch", "a", ".")
	cmd.Args[0] = "md5sum"
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, _ := cmd.CombinedOutput()
	if got := strings.ReplaceAll(string(out), "md5sum: ", "wirespeed sum: "); got != interleaved() {
		t.Errorf("md5sum 2>&1 gives %q, want %q", got, interleaved())
	}
}

func TestSumBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"-a", "md4"}, "invalid argument 'md4' for '--algorithm'"},
		{[]string{"--algorithm"}, "option '--algorithm' requires an argument"},
		{[]string{"-a"}, "option requires an argument -- 'a'"},
		{[]string{"-j", "0"}, "invalid number of jobs: '0'"},
		{[]string{"--jobs=x"}, "invalid number of jobs: 'x'"},
		{[]string{"--st"}, "option '--st' is ambiguous; possibilities: '--status' '--strict'"},
		{[]string{"--frob"}, "unrecognized option '--frob'"},
		{[]string{"-a", "md4", "--frob"}, "invalid argument 'md4' for '--algorithm'"}, // in order, as getopt_long's caller
	} {
		got := runSumIn(t, dir, "C", nil, c.args...)
		if got.code != 1 || !strings.Contains(got.stderr, c.err) || !strings.Contains(got.stderr, "Try 'wirespeed sum --help'") {
			t.Errorf("%q: %+v, want %q", c.args, got, c.err)
		}
	}
	if got := runSumIn(t, dir, "C", nil, "--help"); got.code != 0 || !strings.Contains(got.stdout, "Usage: wirespeed sum") {
		t.Errorf("--help: %+v", got)
	}
	if got := runSumIn(t, dir, "C", nil, "--he", "--frob"); got.code != 0 || !strings.Contains(got.stdout, "Usage: wirespeed sum") {
		t.Errorf("--he --frob: %+v", got)
	}
	if got := runSumIn(t, dir, "C", nil, "--version"); got.code != 0 || got.stdout == "" {
		t.Errorf("--version: %+v", got)
	}
}

// TestSumProgressLine drives the meter directly (a terminal cannot be
// faked here): it must draw one line and erase it before any diagnostic.
func TestSumProgressLine(t *testing.T) {
	var errw, out bytes.Buffer
	r := newSumRun(sumConfig{alg: digest.MD5, files: []string{"a", "b"}}, nil, &out, &errw, systemTerminals())
	r.meter = &progressMeter{r: r, w: &errw, done: make(chan struct{})}
	r.meter.start = r.meter.start.Add(-2e9)
	r.progress.Add(3 << 20)
	r.filesDone.Add(1)
	r.mu.Lock()
	r.meter.draw(r.meter.start.Add(2e9))
	r.diag("x: boom")
	r.meter.stop()
	r.mu.Unlock()
	want := "\rwirespeed sum: 1/2 files, 3.0 MiB, 1.5 MiB/s\x1b[K\r\x1b[Kwirespeed sum: x: boom\n"
	if errw.String() != want {
		t.Errorf("got %q\nwant %q", errw.String(), want)
	}
	if isTerminal(&errw) {
		t.Error("a buffer is not a terminal")
	}
}

// TestSumPipeNamedTwice: two names of one pipe (/dev/stdin twice, a FIFO
// twice) are read one after the other, as md5sum reads them: the first to
// the pipe's end, then the second, which finds it empty. Read at once by
// the pool, they shared out the pipe's bytes between them.
func TestSumPipeNamedTwice(t *testing.T) {
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	var pr *os.File
	pipe := func() string {
		var pw *os.File
		var err error
		pr, pw, err = os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pr.Close() })
		name := fmt.Sprintf("/dev/fd/%d", pr.Fd())
		if _, err := os.Stat(name); err != nil {
			t.Skipf("no /dev/fd: %v", err)
		}
		go func() {
			pw.Write(data)
			pw.Close()
		}()
		return name
	}
	dir := t.TempDir()
	name := pipe()
	got := runSumIn(t, dir, "C", nil, "-j", "2", name, name)
	want := md5hex(data) + "  " + name + "\n" + md5hex(nil) + "  " + name + "\n"
	if got.code != 0 || got.stdout != want || got.stderr != "" {
		t.Errorf("%s twice: %+v\nwant stdout %q", name, got, want)
	}
	name = pipe()
	list := md5hex(data) + "  " + name + "\n" + md5hex(nil) + "  " + name + "\n"
	got = runSumIn(t, dir, "C", []byte(list), "-c", "-j", "2")
	if want := name + ": OK\n" + name + ": OK\n"; got.code != 0 || got.stdout != want || got.stderr != "" {
		t.Errorf("-c, %s twice: %+v\nwant stdout %q", name, got, want)
	}
	// The pipe as standard input and by name, in either order.
	for _, first := range []bool{true, false} {
		name = pipe()
		args := []string{"-j", "2", "-", name}
		if !first {
			args = []string{"-j", "2", name, "-"}
		}
		var o, e bytes.Buffer
		code := runSum(args, pr, &o, &e)
		want := md5hex(data) + "  " + args[2] + "\n" + md5hex(nil) + "  " + args[3] + "\n"
		if code != 0 || o.String() != want || e.String() != "" {
			t.Errorf("%q: exit %d, %q, %q\nwant stdout %q", args, code, o.String(), e.String(), want)
		}
	}
}
