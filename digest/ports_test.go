package digest

import (
	"os"
	"os/exec"
	"testing"
)

// The package builds, tests included, on every platform family its files
// are split by: the raw-descriptor Unix path, the os.File path of the
// others, and Plan 9, whose syscall package has no ENFILE (it has one
// descriptor table per process and none for the system).
func TestBuildsOnOtherPlatforms(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the package; skipped in -short mode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	for _, p := range []struct{ goos, goarch string }{
		{"plan9", "amd64"}, {"windows", "amd64"}, {"darwin", "arm64"}, {"wasip1", "wasm"},
	} {
		cmd := exec.Command(goTool, "vet", ".")
		cmd.Env = append(os.Environ(), "GOOS="+p.goos, "GOARCH="+p.goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s go vet: %v\n%s", p.goos, p.goarch, err, out)
		}
	}
}
