//go:build unix

package cli

import (
	"errors"
	"syscall"
)

// addrUnusable reports whether err, a bind or listen call's, says that
// the address is not one this host can listen on as given.
func addrUnusable(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EINVAL) || addrFamilyMissing(err)
}

// addrFamilyMissing reports whether err, a socket call's, says that the
// host has not the address's family (IPv6 turned off).
func addrFamilyMissing(err error) bool { return errors.Is(err, syscall.EAFNOSUPPORT) }
