//go:build !linux

package main

import "os/exec"

const canPin = false

func startPinned(cmd *exec.Cmd, cpu int) error { return cmd.Start() }
