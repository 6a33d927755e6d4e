package bench

import (
	"io"
	"net"
	"strconv"

	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/netio"
)

// coalescerCases are the netio rows: messages over loopback TCP, one
// conn.Write each (stdlib) or through netio's coalescing Writer.
func coalescerCases() []Case {
	var cs []Case
	for _, size := range []int{64, 512} {
		group := "Coalescer/size=" + strconv.Itoa(size)
		cs = append(cs,
			Case{Suite: "netio", Group: group, Impl: "stdlib", Bytes: int64(size), Fn: coalescerBench(size, false, nil)},
			Case{Suite: "netio", Group: group, Impl: "wirespeed", Bytes: int64(size), Fn: coalescerBench(size, true, nil)},
		)
	}
	return cs
}

// coalescerBench returns the body of a Coalescer row; flushed, if not nil
// (tests), is called when the wirespeed row's timed final Flush has
// returned.
func coalescerBench(size int, coalesce bool, flushed func()) func(benchcase.B) {
	return func(b benchcase.B) {
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
		for b.Loop() {
			if _, err := w.Write(msg); err != nil {
				b.Fatal(err)
			}
		}
		if nw != nil {
			// What the Writer holds when the loop ends is not sent
			// yet: the final Flush is timed with the writes, so that
			// MB/s is of bytes handed to the connection, as the stdlib
			// row's are.
			b.StartTimer()
			if err := nw.Flush(); err != nil {
				b.Fatal(err)
			}
			if flushed != nil {
				flushed()
			}
			b.StopTimer()
		}
	}
}
