//go:build !linux

package serve

import "syscall"

// childAttr is nil: only Linux ends a child with its parent.
func childAttr() *syscall.SysProcAttr { return nil }
