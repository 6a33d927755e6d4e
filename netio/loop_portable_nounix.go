//go:build !unix

package netio

import "errors"

// Without write(2) on a non-blocking descriptor, a connection's writes
// are net.Conn's: a try waits for room for at most firstTry.

func initRaw(*loop, *connSys) {}

func descWrite(*connSys, []byte, bool) (int, error, bool) { return 0, nil, false }

// watchReset is never called here: a connection has no descriptor to
// watch (initRaw), so a reset is found by the next read.
func watchReset(cs *connSys) (bool, error) { return false, errors.ErrUnsupported }
