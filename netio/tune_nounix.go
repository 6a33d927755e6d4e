//go:build !unix

package netio

import "errors"

func setsockoptInt(fd uintptr, level, opt, v int) error { return errors.ErrUnsupported }

func getsockoptInt(fd uintptr, level, opt int) (int, error) { return 0, errors.ErrUnsupported }
