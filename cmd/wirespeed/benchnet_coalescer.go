package main

import (
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/wirespeed/wirespeed/netio"
)

// The `wirespeed bench netio` rows: 64-byte messages over loopback TCP, one
// conn.Write each (stdlib) or through netio's coalescing Writer.
func init() {
	for _, size := range []int{64, 512} {
		group := "Coalescer/size=" + strconv.Itoa(size)
		registerBench(
			benchCase{suite: "netio", group: group, impl: "stdlib", bytes: int64(size), fn: coalescerBench(size, false)},
			benchCase{suite: "netio", group: group, impl: "wirespeed", bytes: int64(size), fn: coalescerBench(size, true)},
		)
	}
}

func coalescerBench(size int, coalesce bool) func(b *testing.B) {
	return func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err == nil {
				io.Copy(io.Discard, c)
				c.Close()
			}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		var w io.Writer = c
		var nw *netio.Writer
		if coalesce {
			nw = netio.NewWriter(c, nil)
			defer nw.Close()
			w = nw
		}
		msg := make([]byte, size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := w.Write(msg); err != nil {
				b.Fatal(err)
			}
		}
		if nw != nil {
			if err := nw.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
