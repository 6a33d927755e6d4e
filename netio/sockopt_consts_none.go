//go:build js || wasip1 || plan9

package netio

// No socket options here: their reads and writes fail with
// errors.ErrUnsupported (tune_nounix.go), whatever these values.
const (
	solSocket = iota
	soSndbuf
	soRcvbuf
	ipprotoTCP
	tcpNodelay
)
