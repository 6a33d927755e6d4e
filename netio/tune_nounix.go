//go:build !unix

package netio

import "errors"

func setsockoptInt(fd uintptr, level, opt, v int) error { return errors.ErrUnsupported }

func getsockoptInt(fd uintptr, level, opt int) (int, error) { return 0, errors.ErrUnsupported }

// isTCPSocket: GetSockOpts tries the TCP options, unsupported as the rest.
func isTCPSocket(fd uintptr) (bool, error) { return true, nil }
