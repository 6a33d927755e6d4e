package main

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

const canPin = true

// startPinned starts cmd with its CPU affinity set to cpu (if cpu >= 0): the
// starting thread pins itself, forks (the child inherits the mask, so every
// thread of a Go child sees one CPU and sets GOMAXPROCS to 1) and restores
// its own mask.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// Leave the thread locked: it dies with this goroutine's lock
		// rather than running other goroutines on one CPU.
		return rerr
	}
	runtime.UnlockOSThread()
	return err
}
