//go:build !linux

package netio

// spliceReads: ReadFrom copies sockets and pipes through its buffer here.
const spliceReads = false
