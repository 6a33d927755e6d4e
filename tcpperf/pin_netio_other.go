//go:build !linux || netio_portable

package tcpperf

// netioPins: netio's portable loops pin nothing, so EngineNetio refuses
// Config.CPUs.
const netioPins = false
