// Package tooltest finds the external programs that wirespeed's tests
// compare it with (coreutils' md5sum, sockperf). A missing program skips
// the test on a developer's machine, and fails it when CI=true, because CI
// installs every program the tests use.
package tooltest

import (
	"os"
	"os/exec"
	"testing"
)

// Path returns the path of the program name, or ends the test: Skip, or
// Fatal under CI=true.
func Path(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, "%s not installed: %v", name, err)
	}
	return path
}

// Unavailable ends the test because what it compares with is not here:
// it skips, or fails under CI=true.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}
