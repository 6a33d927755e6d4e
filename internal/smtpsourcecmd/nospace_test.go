//go:build !plan9

package smtpsourcecmd

import "syscall"

// errNoSpace is a write's error on a full disk (or on /dev/full).
var errNoSpace error = syscall.ENOSPC
