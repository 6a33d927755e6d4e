package dot

import (
	"syscall"
	"testing"
)

// BenchmarkPageEnd calls the kernels on 40 bytes at the end of a page whose
// next page has never been touched (so it is not mapped in), and in the
// middle of a page. A masked-off lane of an AVX-512 load or store that
// falls on such a page costs a slow assist each time; the kernels move
// their windows off it (see _asm/main.go), so both cases should cost about
// the same.
func BenchmarkPageEnd(b *testing.B) {
	page := syscall.Getpagesize()
	// Pages 0 and 2 are written; 1 and 3 stay untouched. src ends page 0,
	// dst page 2.
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		b.Skip(err)
	}
	defer syscall.Munmap(mem)
	for i := range page {
		mem[i] = 'a'
		mem[2*page+i] = 'a'
	}
	dst := mem[3*page-64 : 3*page]
	for _, c := range []struct {
		name string
		src  []byte
	}{
		{"mid", mem[page/2 : page/2+40]},
		{"end", mem[page-40 : page]},
	} {
		for _, impl := range benchImpls[2:] {
			b.Run("op=decode/src="+c.name+"/impl="+impl, func(b *testing.B) {
				benchKernel(b, impl, func() {
					var d Decoder
					for b.Loop() {
						d.Reset()
						d.Transform(dst, c.src, false)
					}
				})
			})
			b.Run("op=encode/src="+c.name+"/impl="+impl, func(b *testing.B) {
				benchKernel(b, impl, func() {
					var e Encoder
					for b.Loop() {
						e.Reset()
						e.Transform(dst, c.src, false)
					}
				})
			})
		}
	}
}
