//go:build linux && !netio_portable

package tcpperf

// netioPins: netio's loops pin themselves to CPUs (EngineNetio with
// Config.CPUs).
const netioPins = true
