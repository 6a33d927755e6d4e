//go:build !unix

package doccheck

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, a cancel of its
// context kills the process alone.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills cmd's process, once started.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
