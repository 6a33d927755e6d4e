package smtpsourcecmd

import "syscall"

// errNoSpace stands in for a write's error on a full disk: Plan 9 has no
// ENOSPC, its errors are strings, each file server's own.
var errNoSpace error = syscall.ErrorString("file system full")
