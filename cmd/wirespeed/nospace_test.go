//go:build !plan9

package main

import "syscall"

// errNoSpace is a write's error on a full disk (or on /dev/full).
var errNoSpace error = syscall.ENOSPC
