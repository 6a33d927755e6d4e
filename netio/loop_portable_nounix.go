//go:build !unix

package netio

// Without write(2) on a non-blocking descriptor, a connection's writes
// are net.Conn's: a try waits for room for at most firstTry.

func initRaw(*loop, *connSys) {}

func descWrite(*connSys, []byte, bool) (int, error, bool) { return 0, nil, false }
