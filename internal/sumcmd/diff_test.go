package sumcmd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
)

// sumFixture is a directory of awkward files for the differential tests.
type sumFixture struct {
	dir      string
	names    []string // regular files, odd names included
	locked   string   // an unreadable file, or "" when running as root
	manyArgs []string // enough files (some > 128 KiB) for multi-buffer MD5
}

func newSumFixture(t *testing.T) sumFixture {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	write := func(name string, n int) {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := sumFixture{dir: dir}
	for i, name := range []string{"plain", "a b", `back\slash`, "new\nline", "cr\rret", "tab\tx", "caf\xc3\xa9", "it's", "-", "both\\and\nnl", " lead", "trail ", "empty", "big"} {
		n := 1 + i*37
		switch name {
		case "empty":
			n = 0
		case "big":
			n = 300 << 10
		}
		write(name, n)
		if name == "-" {
			name = "./-"
		}
		f.names = append(f.names, name)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("locked", 10)
	locked := filepath.Join(dir, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	if fh, err := os.Open(locked); err == nil {
		fh.Close() // root reads mode-000 files: no unreadable case here
	} else {
		f.locked = "locked"
	}
	for i := range 40 {
		name := fmt.Sprintf("m%02d", i)
		write(name, r.IntN(400<<10))
		f.manyArgs = append(f.manyArgs, name)
	}
	return f
}

// compare runs prog (a coreutils tool) and `wirespeed sum -a alg` with the
// same arguments and standard input, and compares them.
func (f sumFixture) compare(t *testing.T, prog, alg string, stdin []byte, args ...string) {
	t.Helper()
	path := coreutils(t, prog)
	what := fmt.Sprintf("%s %q", prog, args)
	want := runTool(t, f.dir, "C", stdin, path, withoutJobs(args)...)
	got := runSumIn(t, f.dir, "C", stdin, append([]string{"-a", alg}, args...)...)
	if slices.Contains(args, "-c") || slices.Contains(args, "--check") {
		want.stdout = as91(want.stdout)
	}
	sameAsCoreutils(t, what, prog, got, want)
}

// withoutJobs drops our -j option, which coreutils does not have.
func withoutJobs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-j":
			i++
		case strings.HasPrefix(args[i], "-j"):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

func (f sumFixture) all() []string {
	args := append([]string{}, f.names...)
	args = append(args, "nosuch", "d")
	if f.locked != "" {
		args = append(args, f.locked)
	}
	return args
}

func TestSumOutputMatchesCoreutils(t *testing.T) {
	f := newSumFixture(t)
	stdin := []byte("standard input\n")
	for _, c := range [][]string{
		f.all(),
		append([]string{"--tag"}, f.all()...),
		append([]string{"-b"}, f.all()...),
		append([]string{"-t"}, f.names...),
		append([]string{"-z"}, f.all()...),
		append([]string{"--zero", "--tag"}, f.names...),
		{},
		{"-"},
		{"plain", "-", "a b", "-"},
		{"--", "-", "plain"},
		{"plain", "--tag", "a b"}, // options after operands
		f.manyArgs,
		append([]string{"-j", "1"}, f.manyArgs...),
		append([]string{"--tag", "-j3"}, f.manyArgs...),
	} {
		f.compare(t, "md5sum", "md5", stdin, c...)
	}
	for _, alg := range []string{"sha1", "sha224", "sha256", "sha384", "sha512"} {
		f.compare(t, alg+"sum", alg, stdin, f.all()...)
		f.compare(t, alg+"sum", alg, stdin, append([]string{"--tag"}, f.names...)...)
	}
}

// With POSIXLY_CORRECT set, the first operand ends the options, for both.
func TestSumPOSIXLYCorrect(t *testing.T) {
	t.Setenv("POSIXLY_CORRECT", "")
	f := newSumFixture(t)
	for _, c := range [][]string{
		{"plain", "--tag", "a b"},
		{"plain", "-b"},
		{"--tag", "plain", "-z"},
	} {
		f.compare(t, "md5sum", "md5", nil, c...)
	}
}

func TestSumUsageMatchesCoreutils(t *testing.T) {
	f := newSumFixture(t)
	for _, c := range [][]string{
		{"--tag", "-c", "x"},
		{"-c", "-z", "x"},
		{"-c", "-b", "x"},
		{"-c", "--text", "x"},
		{"--status", "plain"},
		{"--quiet", "plain"},
		{"--strict", "plain"},
		{"-w", "plain"},
		{"--ignore-missing", "plain"},
		{"--bogus"},
		{"-x"},
		{"--s", "-c", "x"},
		{"--t", "plain"},
		{"--tag=1", "plain"},
		{"--tag", "-t", "plain"},
		{"-t", "--tag", "plain"},
		{"--ta", "plain"},
		{"--stat", "-c", "nosuch.md5"},
	} {
		f.compare(t, "md5sum", "md5", nil, c...)
	}
}

// checkFileFrom writes the output of a real coreutils run as a check file.
func (f sumFixture) checkFileFrom(t *testing.T, name, prog string, args ...string) string {
	t.Helper()
	out := runTool(t, f.dir, "C", nil, coreutils(t, prog), args...)
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(out.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func (f sumFixture) writeCheck(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestSumCheckMatchesCoreutils(t *testing.T) {
	f := newSumFixture(t)
	good := f.checkFileFrom(t, "good.md5", "md5sum", f.names...)
	tagged := f.checkFileFrom(t, "tagged.md5", "md5sum", append([]string{"--tag"}, f.names...)...)
	many := f.checkFileFrom(t, "many.md5", "md5sum", f.manyArgs...)
	plainSum := strings.Fields(runTool(t, f.dir, "C", nil, coreutils(t, "md5sum"), "plain").stdout)[0]
	upper := strings.ToUpper(plainSum)
	zero := strings.Repeat("0", 32)
	mixed := f.writeCheck(t, "mixed.md5", strings.Join([]string{
		"# a comment",
		"",
		plainSum + "  plain",
		zero + "  a b",                        // mismatch
		plainSum + "  nosuch",                 // missing
		plainSum + "  d",                      // directory
		plainSum + " *plain",                  // binary flag
		upper + "  plain\r",                   // upper case, CRLF
		"garbage",                             // malformed
		plainSum[:31] + "  plain",             // short digest
		plainSum + "0  plain",                 // long digest
		"MD5 (plain) = " + plainSum,           // BSD tag
		"MD5(plain)=" + plainSum,              // BSD tag, no spaces
		"  MD5 (plain)  =  " + plainSum,       // leading blanks
		"SHA1 (plain) = " + plainSum,          // wrong tag
		"\\" + plainSum + "  back\\\\slash",   // escaped name, wrong sum
		"\\" + plainSum + "  bad\\xescape",    // invalid escape
		"\\" + plainSum + "  trailing\\",      // lone backslash
		plainSum + "\tplain",                  // tab separator
		plainSum + "  plain\x00junk",          // NUL in name
		"MD5 (plain) = " + plainSum + "\x00x", // NUL after a BSD tag's digest
		plainSum + "\x00  plain",              // NUL after the digest
		"\x00" + plainSum + "  plain",         // NUL first
		"\\" + plainSum + "  pl\x00ain",       // NUL in an escaped name
		plainSum + "  ",                       // no name
		"MD5 (a b) = " + zero,                 // tagged mismatch
	}, "\n")+"\n")
	// NULs: coreutils reads the whole line, its fields as C strings.
	nuls := f.writeCheck(t, "nuls.md5", strings.Join([]string{
		"MD5 (plain\x00junk) = " + plainSum,             // the name ends at the NUL, ')' is the line's last
		plainSum + "  \x00",                             // an empty name
		plainSum + "  plain\x00",                        // a NUL at the end
		plainSum + " \x00plain",                         // the reversed form, by the NUL
		"MD5 (plain) = " + plainSum + "\x00",            // the digest ends at a NUL
		"MD5 (plain) = " + plainSum[:31] + "\x00" + "0", // a NUL within the digest
	}, "\n")+"\n")
	nulReversed := f.writeCheck(t, "nulrev.md5", plainSum+"  plain\n"+plainSum+"  \x00\n"+plainSum+" plain\n")
	reversed := f.writeCheck(t, "reversed.md5", plainSum+" plain\n"+plainSum+"  plain\n"+plainSum+" plain\n")
	allMissing := f.writeCheck(t, "missing.md5", plainSum+"  nosuch\n"+plainSum+"  nosuch2\n")
	comments := f.writeCheck(t, "comments.md5", "# only\n\n#comments\n")
	empty := f.writeCheck(t, "empty.md5", "")
	dashes := f.writeCheck(t, "dash.md5", plainSum+"  -\n"+plainSum+"  plain\n")
	noNewline := f.writeCheck(t, "nonl.md5", plainSum+"  plain")
	// More malformed lines than the event queue holds, behind a pending file.
	bigSum := strings.Fields(runTool(t, f.dir, "C", nil, coreutils(t, "md5sum"), "big").stdout)[0]
	flood := f.writeCheck(t, "flood.md5", bigSum+"  big\n"+strings.Repeat("junk\n", 3*maxQueued)+plainSum+"  plain\n")
	// A "-" line (standard input hashed) behind a file being hashed, then
	// standard input as a check list: the line reads it first.
	stdinLine := f.writeCheck(t, "stdinline.md5", bigSum+"  big\n"+"d41d8cd98f00b204e9800998ecf8427e  -\n")
	stdinCheck, err := os.ReadFile(filepath.Join(f.dir, mixed))
	if err != nil {
		t.Fatal(err)
	}
	stdinCheck = append(stdinCheck, plainSum+"  -\n"...) // "-" in a check list read from stdin: malformed
	for _, c := range []struct {
		stdin []byte
		args  []string
	}{
		{nil, []string{"-c", good}},
		{nil, []string{"-c", tagged}},
		{nil, []string{"-c", many}},
		{nil, []string{"-c", "-j", "1", many}},
		{nil, []string{"-c", mixed}},
		{nil, []string{"-c", "-w", mixed}},
		{nil, []string{"-c", "--quiet", mixed}},
		{nil, []string{"-c", "--status", mixed}},
		{nil, []string{"-c", "--strict", good}},
		{nil, []string{"-c", "--strict", mixed}},
		{nil, []string{"-c", "--ignore-missing", mixed}},
		{nil, []string{"-c", "--ignore-missing", allMissing}},
		{nil, []string{"-c", "--ignore-missing", "--status", allMissing}},
		{nil, []string{"-c", allMissing}},
		{nil, []string{"-c", "-w", nuls}},
		{nil, []string{"-c", nulReversed}},
		{nil, []string{"-c", reversed}},
		{nil, []string{"-c", reversed, good}}, // the reversed-form state carries over
		{nil, []string{"-c", comments}},
		{nil, []string{"-c", empty}},
		{nil, []string{"-c", "nosuch.md5"}},
		{nil, []string{"-c", "d"}},
		{nil, []string{"-c", good, "nosuch.md5", mixed}},
		{[]byte("standard input\n"), []string{"-c", dashes}},
		{nil, []string{"-c", noNewline}},
		{nil, []string{"-c", "-w", flood}},
		{stdinCheck, []string{"-c"}},
		{stdinCheck, []string{"-c", "-w", "-"}},
		{[]byte("garbage\n"), []string{"-c"}},
		{[]byte(plainSum + "  plain\n"), []string{"--check", "--quiet", "-", good}},
		{[]byte(plainSum + "  plain\n"), []string{"-c", stdinLine, "-"}},
		{[]byte(plainSum + "  plain\n"), []string{"-c", "-j", "1", stdinLine, "-"}},
	} {
		f.compare(t, "md5sum", "md5", c.stdin, c.args...)
	}
	for _, alg := range []string{"sha1", "sha256", "sha512"} {
		sums := f.checkFileFrom(t, alg+".sums", alg+"sum", f.names...)
		tags := f.checkFileFrom(t, alg+".tags", alg+"sum", append([]string{"--tag"}, f.names...)...)
		f.compare(t, alg+"sum", alg, nil, "-c", sums, tags)
		f.compare(t, alg+"sum", alg, nil, "-c", "-w", mixed) // MD5 lines are malformed here
	}
}

// TestSumMultiBufferOnCLIPath proves the CLI really hashes with
// multi-buffer SIMD MD5 where the CPU has it (reported by --debug), and
// never where it does not (purego builds, other CPUs).
func TestSumMultiBufferOnCLIPath(t *testing.T) {
	f := newSumFixture(t)
	got := runSumIn(t, f.dir, "C", nil, append([]string{"--debug", "-j", "2"}, f.manyArgs...)...)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	m := regexp.MustCompile(`multi-buffer MD5 "(\w*)": (\d+) of (\d+) files`).FindStringSubmatch(got.stderr)
	if m == nil {
		t.Fatalf("no debug line: %q", got.stderr)
	}
	n, _ := strconv.Atoi(m[2])
	if m[1] != digest.MultiBuffer() || m[3] != "40" {
		t.Errorf("debug line %q, want ISA %q and 40 files", m[0], digest.MultiBuffer())
	}
	// 32 of the 40 files are larger than one 128 KiB read.
	if digest.MultiBuffer() != "" && n == 0 || digest.MultiBuffer() == "" && n != 0 {
		t.Errorf("%d files hashed with multi-buffer MD5 (ISA %q)", n, digest.MultiBuffer())
	}
	t.Log(strings.TrimSpace(got.stderr))
}
