//go:build !unix

package cli

// addrUnusable reports whether err, a bind or listen call's, says that
// the address is not one this host can listen on as given: on Unix only
// (elsewhere the flag is named, and the error is a run-time one).
func addrUnusable(error) bool { return false }

// addrFamilyMissing reports whether err, a socket call's, says that the
// host has not the address's family: on Unix only.
func addrFamilyMissing(error) bool { return false }
