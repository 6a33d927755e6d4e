//go:build windows || plan9

package smtpsinkcmd

import (
	"errors"
	"io"
)

// openSyslog: Go's log/syslog is not on this system.
func openSyslog(string) (io.WriteCloser, error) {
	return nil, errors.New("-s: no syslog on this system")
}
