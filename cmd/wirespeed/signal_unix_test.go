//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The first SIGINT cancels a command that stops cleanly; a second one
// ends the process, even if the command's stop hangs. The test runs
// itself as such a command.
func TestSecondSignal(t *testing.T) {
	if os.Getenv("WIRESPEED_TEST_HANG") != "" {
		ctx, stop := interruptible(context.Background(), 0)
		defer stop()
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("cancelled")
		select {} // a stop that hangs
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignal$")
	cmd.Env = append(os.Environ(), "WIRESPEED_TEST_HANG=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // the old code hung
	defer guard.Stop()
	lines := bufio.NewScanner(out)
	for _, want := range []string{"ready", "cancelled"} {
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("read %q, want %q", lines.Text(), want)
		}
		cmd.Process.Signal(syscall.SIGINT)
	}
	// The signals are let go just after the cancel, not at once: a second
	// signal sent as the first was seen may still be caught. More follow
	// until the process ends.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for err == nil {
		select {
		case err = <-done:
			if err == nil {
				err = errors.New("exit status 0")
			}
		case <-tick.C:
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("%v: want the process ended by the second SIGINT", err)
	}
}

// A signal sent twice at once, as timeout(1) sends its SIGTERM to the
// command and then to its process group, is one: the command stops
// cleanly (the second ended tcpperf and bench with no result). The grace
// is long here, so that however slow the host the duplicate falls in it.
func TestDuplicateSignal(t *testing.T) {
	if os.Getenv("WIRESPEED_TEST_DUP") != "" {
		// stop is left to the exit: the last signal may still be on its
		// way to this process when it returns, and after a stop it would
		// end the process by its default action (CI saw this once), which
		// is a race of this test's own making, not of the grace.
		ctx, _ := interruptible(context.Background(), time.Hour)
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("cancelled")
		bufio.NewReader(os.Stdin).ReadString('\n') // the duplicate is sent by now
		fmt.Println("stopped")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDuplicateSignal$")
	cmd.Env = append(os.Environ(), "WIRESPEED_TEST_DUP=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
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
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("read %q, want ready", lines.Text())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Process.Signal(syscall.SIGTERM)
	if !lines.Scan() || lines.Text() != "cancelled" {
		t.Fatalf("read %q, want cancelled", lines.Text())
	}
	cmd.Process.Signal(syscall.SIGTERM) // later, and still within the grace
	fmt.Fprintln(in, "go on")
	if !lines.Scan() || lines.Text() != "stopped" {
		t.Errorf("read %q, want stopped", lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%v: want the process to stop cleanly", err)
	}
}
