package dot

import (
	"io"
	"strings"
	"testing"
)

// allocText is mail-like dot-encoded text: CRLF lines, a stuffed dot, and
// the end marker, long enough for every SIMD kernel to run.
var allocText = strings.Repeat("Subject: a line of ordinary mail text\r\n", 4) +
	"..a stuffed dot\r\n" + strings.Repeat("more text on a line of its own\r\n", 3) + ".\r\n"

// TestTransformNoAllocs checks that Transform allocates nothing, in every
// mode and with every kernel, when dst and src are arrays on the caller's
// stack: they must not escape through the kernel dispatch.
func TestTransformNoAllocs(t *testing.T) {
	if len(allocText) > 300 {
		t.Fatalf("allocText is %d bytes, more than the test's arrays hold", len(allocText))
	}
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, m := range []Mode{Compat, Strict, Raw} {
				var d Decoder
				n := testing.AllocsPerRun(20, func() {
					var src [300]byte
					var dst [512]byte
					s := src[:copy(src[:], allocText)]
					d.Reset()
					d.Mode = m
					nDst, nSrc, err := d.Transform(dst[:], s, true)
					if err != io.EOF || nSrc != len(s) || nDst == 0 || !d.Done() {
						t.Fatalf("decode %v: nDst=%d nSrc=%d err=%v done=%v", m, nDst, nSrc, err, d.Done())
					}
				})
				if n != 0 {
					t.Errorf("Decoder{Mode: %v}.Transform: %v allocations, want 0", m, n)
				}
				var e Encoder
				body := allocText[:len(allocText)-3] // without the end marker
				n = testing.AllocsPerRun(20, func() {
					var src [300]byte
					var dst [512]byte
					s := src[:copy(src[:], body)]
					e.Reset()
					e.Mode = m
					nDst, nSrc, err := e.Transform(dst[:], s, true)
					if err != nil || nSrc != len(s) || nDst <= nSrc {
						t.Fatalf("encode %v: nDst=%d nSrc=%d err=%v", m, nDst, nSrc, err)
					}
				})
				if n != 0 {
					t.Errorf("Encoder{Mode: %v}.Transform: %v allocations, want 0", m, n)
				}
			}
		})
	})
}
