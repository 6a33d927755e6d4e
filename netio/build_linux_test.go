package netio

import (
	"os"
	"os/exec"
	"testing"
)

// TestBuildsElsewhere: the package builds for the systems without the
// socket constants of the Unix ones (js/wasm, wasip1, Plan 9), where
// Serve runs on its portable implementation, as the package doc says.
func TestBuildsElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the package")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	for _, target := range []struct{ goos, goarch string }{
		{"js", "wasm"}, {"wasip1", "wasm"}, {"plan9", "amd64"},
	} {
		cmd := exec.Command(goTool, "build", ".")
		cmd.Env = append(os.Environ(), "GOOS="+target.goos, "GOARCH="+target.goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s go build: %v\n%s", target.goos, target.goarch, err, out)
		}
	}
}
