//go:build !plan9

package smtpsource

import "syscall"

// errRefused is a dial's error on a port no one listens on.
var errRefused error = syscall.ECONNREFUSED
