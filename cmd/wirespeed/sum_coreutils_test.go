package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// emulatedCoreutils is the coreutils release whose output `wirespeed sum`
// reproduces byte for byte. Releases differ in small ways (9.1 escapes
// names in -c output only when they contain a newline; later releases
// also for '\' and '\r'), so the differential tests run only against it.
const emulatedCoreutils = "9.1"

// coreutils returns the path of the named coreutils program, skipping the
// test when it is not installed or is another release.
func coreutils(t *testing.T, prog string) string {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		t.Skipf("%s not installed: %v", prog, err)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Skipf("%s --version: %v", prog, err)
	}
	m := regexp.MustCompile(`\(GNU coreutils\) (\S+)`).FindSubmatch(out)
	if m == nil || string(m[1]) != emulatedCoreutils {
		t.Skipf("%s is not GNU coreutils %s (%q)", prog, emulatedCoreutils, firstLine(out))
	}
	return path
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
	code := run(append([]string{"sum"}, args...), bytes.NewReader(stdin), &o, &e)
	return runOutput{o.String(), e.String(), code}
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
