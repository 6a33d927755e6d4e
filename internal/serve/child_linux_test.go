package serve

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
)

// A comparison engine's process ends with serve's, even when serve is
// killed and cannot stop it (it was left serving, holding the address).
// The test runs itself as serve, with a stand-in engine that writes its
// process ID and sleeps, kills that serve, and waits for the engine to
// go.
func TestCompareChildEndsWithServe(t *testing.T) {
	if exe := os.Getenv("SERVE_TEST_COMPARE_EXE"); exe != "" {
		runCompare(context.Background(), Config{Engine: "gnet", Mode: "line", Addr: "127.0.0.1:0"}, exe, io.Discard, io.Discard)
		return
	}
	dir := t.TempDir()
	pidFile, exe := filepath.Join(dir, "pid"), filepath.Join(dir, "engine")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".new && mv " + pidFile + ".new " + pidFile + "\nexec sleep 3600\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestCompareChildEndsWithServe$")
	parent.Env = append(os.Environ(), "SERVE_TEST_COMPARE_EXE="+exe)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	// Guards, not timing: each wait ends in milliseconds.
	var pid int
	waitFor(t, "the engine's start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(bytes.TrimSpace(b)))
		return err == nil && pid > 0
	})
	parent.Process.Kill()
	parent.Wait()
	waitFor(t, "the engine's end", func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true // gone
		}
		_, rest, _ := bytes.Cut(b, []byte(") "))
		return len(rest) > 0 && rest[0] == 'Z' // ended, not reaped yet
	})
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not after a minute", what)
		}
	}
}

// A comparison engine that fails gives serve its exit status (2 for a
// usage mistake), its own words on stderr, and no second line.
func TestCompareExitStatus(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "engine")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'engine: bad flag' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := runCompare(context.Background(), Config{Engine: "gnet", Mode: "line", Addr: "127.0.0.1:0"}, exe, io.Discard, &stderr)
	if status, print := cli.Status(err); status != 2 || print || stderr.String() != "engine: bad flag\n" {
		t.Errorf("%v: status %d, printed again %v; stderr %q", err, status, print, stderr.String())
	}
}
