// Command _asm generates the SIMD kernels of package dot with avo.
//
//	cd dot/_asm && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg dot
//
// Every kernel has the same shape:
//
//	func k(dst, src []byte, flags uint64) (nDst, nSrc int)
//
// flags bit 0 says src starts a line; bits 1 and up hold the Mode (0 Compat,
// 1 Strict, 2 Raw). A kernel decodes or encodes a prefix of src into dst
// and returns how much it wrote and consumed. It only handles what it is
// sure of: it stops before anything the reference kernel must decide (an
// end marker, a bare CR or LF it cannot pass, a byte whose meaning depends
// on input it cannot see, output that does not fit), and the Go side in
// kernel_amd64.go derives the state from the last bytes consumed and hands
// the rest to the generic kernel. The algorithm is documented in
// kernel_amd64.go; the comments here follow the instructions.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const signature = "func(dst, src []byte, flags uint64) (nDst, nSrc int)"

// Modes, as in package dot.
const (
	compat = iota
	strict
	raw
)

var modeName = [...]string{compat: "compat", strict: "strict", raw: "raw"}

func main() {
	ConstraintExpr("!purego")
	decodeAVX512()
	encodeAVX512()
	decodeAVX2()
	encodeAVX2()
	Generate()
}

// returnCounts stores dst-dst0 and src-src0 as the results.
func returnCounts(dst, src reg.Register) {
	d0 := Load(Param("dst").Base(), GP64())
	s0 := Load(Param("src").Base(), GP64())
	SUBQ(d0, dst)
	SUBQ(s0, src)
	Store(dst, Return("nDst"))
	Store(src, Return("nSrc"))
}

// dispatchMode jumps to label+"_"+mode for the mode in flags>>1 (flags is
// clobbered) and returns the label names in mode order.
func dispatchMode(prefix string, flags Op, modes []int) []string {
	SHRQ(U8(1), flags)
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = prefix + "_" + modeName[m]
	}
	for i, m := range modes[1:] {
		CMPQ(flags, U32(m))
		JEQ(LabelRef(names[i+1]))
	}
	JMP(LabelRef(names[0]))
	return names
}

// trackDirty records in dirty whether the block with masks lf and cr has
// a CR or LF. The copy loops for long lines are tried only when dirty is
// 0. With history 1, dirty is simply lf|cr; with a longer history (a bit
// mask, one bit per block) the loops wait for that many line-free blocks
// in a row, so that on short lines the branch that tries them is not taken.
func trackDirty(dirty, lf, cr reg.Register, history uint8) {
	if history == 1 {
		MOVQ(lf, dirty)
		ORQ(cr, dirty)
		return
	}
	x := GP64()
	MOVQ(lf, x)
	ORQ(cr, x)
	NEGQ(x) // CF = x != 0
	ADCQ(dirty, dirty)
	ANDQ(U8(history), dirty)
}

// Masked loads and stores at the ends of src and dst.
//
// A masked-off lane of an AVX-512 load or store faults on nothing, but
// where it falls on a page that is not mapped in (the untouched page after
// a buffer, say), the CPU takes a slow assist each time: hundreds of
// cycles. So when a 64-byte window would cross into the next page while
// the lanes that matter do not, these helpers use the window that ends at
// the page end instead, and move the bytes into place with VPCOMPRESSB or
// VPEXPANDB.

var labels = map[string]int{}

// uniq returns a new label name starting with prefix.
func uniq(prefix string) string {
	labels[prefix]++
	return prefix + "_" + string(rune('a'+labels[prefix]-1))
}

const pageSize = 4096

// loadMaskedZ sets out to the bytes at p+disp selected by m (lanes 0 to
// n-1 for some n), and its other lanes to 0.
func loadMaskedZ(p reg.Register, disp int, m reg.Register, out reg.VecVirtual) {
	l := uniq("ld")
	a, o, x := GP64(), GP64(), GP64()
	k := K()
	LEAQ(Mem{Base: p, Disp: disp}, a)
	MOVQ(a, o)
	ANDQ(U32(pageSize-1), o)
	CMPQ(o, U32(pageSize-64))
	JBE(LabelRef(l + "_plain"))
	POPCNTQ(m, x)
	ADDQ(o, x)
	CMPQ(x, U32(pageSize))
	JA(LabelRef(l + "_plain"))
	SUBQ(U32(pageSize-64), o) // the window moves down by o (1 to 63)
	SUBQ(o, a)
	SHLXQ(o, m, x)
	KMOVQ(x, k)
	VMOVDQU8_Z(Mem{Base: a}, k, out)
	VPCOMPRESSB_Z(out, k, out)
	JMP(LabelRef(l + "_done"))
	Label(l + "_plain")
	KMOVQ(m, k)
	VMOVDQU8_Z(Mem{Base: a}, k, out)
	Label(l + "_done")
}

// storeLowZ stores the lowest n bytes of v at p (n at most 64).
func storeLowZ(v reg.VecVirtual, n, p reg.Register) {
	l := uniq("st")
	o, x := GP64(), GP64()
	k := K()
	MOVQ(I32(-1), x)
	BZHIQ(n, x, x)
	MOVQ(p, o)
	ANDQ(U32(pageSize-1), o)
	CMPQ(o, U32(pageSize-64))
	JBE(LabelRef(l + "_plain"))
	ADDQ(n, o)
	CMPQ(o, U32(pageSize))
	JA(LabelRef(l + "_plain"))
	SUBQ(n, o)
	SUBQ(U32(pageSize-64), o) // the window moves down by o (1 to 63)
	SHLXQ(o, x, x)
	KMOVQ(x, k)
	w := ZMM()
	VPEXPANDB_Z(v, k, w)
	NEGQ(o)
	VMOVDQU8(w, k, Mem{Base: p, Index: o, Scale: 1})
	JMP(LabelRef(l + "_done"))
	Label(l + "_plain")
	KMOVQ(x, k)
	VMOVDQU8(v, k, Mem{Base: p})
	Label(l + "_done")
}
