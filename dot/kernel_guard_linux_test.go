package dot

import (
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"syscall"
	"testing"
)

// guardedPage maps three pages and makes the first and last inaccessible,
// so that a slice ending at the end of the middle page, or starting at its
// start, faults on any access past its end or before its start.
func guardedPage(t *testing.T) (mid []byte) {
	ps := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:ps], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	if err := syscall.Mprotect(mem[2*ps:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[ps : 2*ps : 2*ps]
}

// TestKernelsPageGuards runs every kernel with src and dst placed against
// inaccessible pages, at their end and at their start: a read or write
// outside the slices faults, and the fault fails the test.
func TestKernelsPageGuards(t *testing.T) {
	srcPage := guardedPage(t)
	dstPage := guardedPage(t)
	ps := len(srcPage)
	forKernels(t, func(t *testing.T, k kernel) {
		r := rand.New(rand.NewPCG(9, 10))
		old := debug.SetPanicOnFault(true)
		defer debug.SetPanicOnFault(old)
		withKernel(k, func() {
			for n := 0; n <= 300; n++ {
				for style := range 7 {
					in := kInput(r, n, style)
					for _, atEnd := range []bool{true, false} {
						var src []byte
						if atEnd {
							src = srcPage[ps-n:]
						} else {
							src = srcPage[:n:n]
						}
						copy(src, in)
						for _, dl := range []int{0, 1, n / 2, n + 1, 2*n + 8} {
							var dst []byte
							if atEnd {
								dst = dstPage[ps-dl:]
							} else {
								dst = dstPage[:dl:dl]
							}
							mode := kModes[(n+style+dl)%3]
							guardRun(t, fmt.Sprintf("decode %v n=%d dst=%d atEnd=%v", mode, n, dl, atEnd), func() {
								d := Decoder{Mode: mode}
								d.Transform(dst, src, true)
							})
							guardRun(t, fmt.Sprintf("encode %v n=%d dst=%d atEnd=%v", mode, n, dl, atEnd), func() {
								e := Encoder{Mode: mode}
								e.Transform(dst, src, true)
							})
						}
					}
				}
			}
		})
	})
}

// guardRun runs f and fails the test if it faults.
func guardRun(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("%s: %v", what, e)
		}
	}()
	f()
}
