package dot

import (
	"fmt"
	"testing"
)

// BenchmarkAlias encodes and decodes 256 KiB of the longline corpus into
// 4 KiB chunks of dst (as a DotWriter does into its bufio.Writer), with
// src and dst at the same offset in their pages (d=0) or not (d=1). At
// d=0 every load of src comes 4 KiB after the store to the same place in
// dst; a masked store there makes such loads wait (see _asm's storeLowZ),
// so the two should cost about the same.
func BenchmarkAlias(b *testing.B) {
	const n = 256 << 10
	var plain []byte
	for _, c := range benchCorpora() {
		if c.name == "longline" {
			plain = c.plain[:n]
		}
	}
	src, _ := pageBuf(n)
	copy(src, plain)
	for _, d := range []int{0, 1} {
		dbuf, _ := pageBuf(4096 + 64)
		dst := dbuf[d : d+4096]
		for _, impl := range benchImpls[2:] {
			b.Run(fmt.Sprintf("op=encode/d=%d/impl=%s", d, impl), func(b *testing.B) {
				b.SetBytes(n)
				benchKernel(b, impl, func() {
					var e Encoder
					for b.Loop() {
						e.Reset()
						for i := 0; i < n; {
							_, m, _ := e.Transform(dst, src[i:], false)
							i += m
						}
					}
				})
			})
			b.Run(fmt.Sprintf("op=decode/d=%d/impl=%s", d, impl), func(b *testing.B) {
				b.SetBytes(n)
				benchKernel(b, impl, func() {
					var dec Decoder
					for b.Loop() {
						dec.Reset()
						dec.Transform(dst[:1], src[:1], false) // past the first line start
						for i := 1; i < n; {
							_, m, _ := dec.Transform(dst, src[i:], false)
							i += m
						}
					}
				})
			})
		}
	}
}

// pageBuf returns n bytes that start a page (4 KiB).
func pageBuf(n int) (b, whole []byte) {
	whole = make([]byte, n+4096)
	o := int(-kAddr(whole) & 4095)
	return whole[o : o+n], whole
}
