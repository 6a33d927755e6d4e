//go:build !unix

package tcpperf

func ensureFDs(need uint64) error { return nil }

func ensurePorts(conns int) error { return nil }
