package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// ListenError returns err, a failure to listen on addr, the value of
// name (a flag, "-addr", or "address" for an argument), with name and
// addr in front of its message if it is about the address: a lookup of
// its host that failed, an address net found unfit (*net.AddrError), or
// a socket, bind or listen call that the kernel refused for it (net's
// "listen tcp ADDR: " goes, as addr says it). Such an error is a usage
// error (exit status 2) when the address is one this host cannot listen
// on however often it is tried: a host name that does not exist, one
// with no address of the family asked for (an IPv6 address listened on
// as tcp4), an address that is not one of this host's
// (EADDRNOTAVAIL), one the kernel refuses as given (EINVAL: a
// link-local IPv6 address without its zone, a Unix socket path too
// long), or an address family the host has not (EAFNOSUPPORT). Where
// the environment must change, not the command line (an address in use,
// a port or path this user may not bind, a missing directory, no DNS
// server), it stays a run-time error, exit status 1. Any other error (a
// process out of file descriptors) is returned as it is, and nil is nil.
func ListenError(name, addr string, err error) error {
	if err == nil {
		return nil
	}
	var de *net.DNSError
	var ae *net.AddrError
	var se *os.SyscallError
	usage := false
	switch {
	case errors.As(err, &de):
		usage = de.IsNotFound
	case errors.As(err, &ae):
		usage = true // "no suitable address found": an IPv6 one for tcp4, say
	case errors.As(err, &se) && (se.Syscall == "bind" || se.Syscall == "listen"):
		usage = addrUnusable(se.Err)
	case errors.As(err, &se) && se.Syscall == "socket":
		if !addrFamilyMissing(se.Err) {
			return err // out of descriptors or memory: not the address's
		}
		usage = true
	default:
		return err
	}
	inner := err
	if oe, ok := err.(*net.OpError); ok && oe.Op == "listen" {
		inner = oe.Err // it says the address again
	}
	err = fmt.Errorf("%s %q: %w", name, addr, inner)
	if usage {
		return Usage(err)
	}
	return err
}
