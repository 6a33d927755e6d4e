package sumcmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// emulatedCoreutils is the coreutils release whose output `wirespeed sum`
// reproduces byte for byte. Releases differ in small ways (9.1 escapes
// names in -c output only when they contain a newline; later releases also
// for '\' and '\r'): the differential tests run against whatever release
// is installed, log it, and derive such differences from that release's
// own output (see as91).
const emulatedCoreutils = "9.1"

// loggedVersion records the tests that have logged a program's version.
var loggedVersion sync.Map

var versionRE = regexp.MustCompile(`\(GNU coreutils\) (\S+)`)

// coreutils returns the path of the named coreutils program. Where it is
// missing, or is not GNU coreutils, the test skips (fails under CI=true).
func coreutils(t *testing.T, prog string) string {
	t.Helper()
	path := tooltest.Path(t, prog)
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		tooltest.Unavailable(t, "%s --version: %v", prog, err)
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		tooltest.Unavailable(t, "%s is not GNU coreutils (%q)", prog, firstLine(out))
	}
	if _, seen := loggedVersion.LoadOrStore(t.Name()+"\x00"+prog, true); seen {
		return path
	}
	if v := string(m[1]); v != emulatedCoreutils {
		t.Logf("comparing with %s (wirespeed sum emulates %s; known differences are derived from its output)", firstLine(out), emulatedCoreutils)
	} else {
		t.Logf("comparing with %s", firstLine(out))
	}
	return path
}

// as91 rewrites the check-mode status lines ("NAME: OK", ": FAILED",
// ": FAILED open or read") of any coreutils release the way 9.1 writes
// them: escaped (a leading '\') only when the name has a newline. On 9.1's
// own output it changes nothing.
func as91(stdout string) string {
	lines := strings.SplitAfter(stdout, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "\\") {
			continue
		}
		for _, status := range []string{": OK\n", ": FAILED\n", ": FAILED open or read\n"} {
			name, ok := strings.CutSuffix(l[1:], status)
			if !ok {
				continue
			}
			if plain, ok := unescapeName([]byte(name)); ok && !strings.Contains(plain, "\n") {
				lines[i] = plain + status
			}
			break
		}
	}
	return strings.Join(lines, "")
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

type runOutput struct {
	stdout, stderr string
	code           int
}

// runTool runs an external command in dir with the given locale.
func runTool(t *testing.T, dir, locale string, stdin []byte, name string, args ...string) runOutput {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Args[0] = filepath.Base(name) // the program name in its diagnostics
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL="+locale, "LANG=", "LANGUAGE=")
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return runOutput{o.String(), e.String(), code}
}

// runSumIn runs `wirespeed sum` in-process with the working directory
// and locale of the comparison.
func runSumIn(t *testing.T, dir, locale string, stdin []byte, args ...string) runOutput {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("LC_ALL", locale)
	var o, e bytes.Buffer
	code := runSum(args, bytes.NewReader(stdin), &o, &e)
	return runOutput{o.String(), e.String(), code}
}

// runSum runs `wirespeed sum` in-process and returns its exit status.
func runSum(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	status, _ := cli.Status(Run(context.Background(), args, stdin, stdout, stderr))
	return status
}

// sameAsCoreutils compares stdout and the exit status byte for byte, and
// stderr after the program name: coreutils says "md5sum:", we say
// "wirespeed sum:".
func sameAsCoreutils(t *testing.T, what string, prog string, got, want runOutput) {
	t.Helper()
	wantErr := strings.ReplaceAll(want.stderr, prog+": ", "wirespeed sum: ")
	wantErr = strings.ReplaceAll(wantErr, "Try '"+prog+" --help'", "Try 'wirespeed sum --help'")
	if got.stdout != want.stdout {
		t.Errorf("%s: stdout differs\n got: %q\nwant: %q", what, got.stdout, want.stdout)
	}
	if got.stderr != wantErr {
		t.Errorf("%s: stderr differs\n got: %q\nwant: %q", what, got.stderr, wantErr)
	}
	if got.code != want.code {
		t.Errorf("%s: exit status %d, want %d", what, got.code, want.code)
	}
}
