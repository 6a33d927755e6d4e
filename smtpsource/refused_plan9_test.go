package smtpsource

import "syscall"

// errRefused is a dial's error on a port no one listens on: Plan 9's
// error string, as it has no error numbers.
var errRefused error = syscall.ErrorString("connection refused")
