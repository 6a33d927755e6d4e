//go:build !linux

package bench

import (
	"errors"
	"os/exec"
)

const canPin = false

func cpuAllowed(int) (bool, string) { return true, "" }

func startPinned(cmd *exec.Cmd, cpu int) error { return cmd.Start() }

func listeningPorts(pid int) ([]int, error) {
	return nil, errors.New("finding a child's listening port needs Linux's /proc")
}

func peakRSS(pid int) (float64, bool) { return 0, false }
