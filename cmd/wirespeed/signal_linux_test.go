package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A duplicate of the signal that stopped a command, coming once the
// command has returned (within the grace), does not end the process by
// the signal's default action: its exit status is the command's. The
// child sends it to its own thread (delivered before the call returns).
func TestDuplicateAfterReturn(t *testing.T) {
	if os.Getenv("WIRESPEED_TEST_LATEDUP") != "" {
		status := run([]string{"serve", "-addr", "127.0.0.1:0"}, strings.NewReader(""), os.Stdout, os.Stderr)
		runtime.LockOSThread()
		syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGTERM)
		fmt.Println("alive", status)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDuplicateAfterReturn$")
	cmd.Env = append(os.Environ(), "WIRESPEED_TEST_LATEDUP=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "listening on ") {
		t.Fatalf("read %q, want the serve's address", lines.Text())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "alive ") {
		t.Errorf("read %q, want alive after its own SIGTERM", lines.Text())
	}
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%v: want the process to stop cleanly", err)
	}
}
