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

// args holds the registers every kernel starts from.
type args struct {
	dst, dstN, src, srcN, flags reg.GPVirtual
}

// begin starts the kernel name (doc describes it) and loads its arguments.
// With ends, dstN and srcN become the ends of dst and src; otherwise they
// hold the lengths.
func begin(name, doc string, ends bool) args {
	TEXT(name, NOSPLIT, signature)
	Doc(doc)
	Pragma("noescape")
	var a args
	a.dst, a.dstN = GP64(), GP64()
	Load(Param("dst").Base(), a.dst)
	Load(Param("dst").Len(), a.dstN)
	if ends {
		ADDQ(a.dst, a.dstN)
	}
	a.src, a.srcN = GP64(), GP64()
	Load(Param("src").Base(), a.src)
	Load(Param("src").Len(), a.srcN)
	if ends {
		ADDQ(a.src, a.srcN)
	}
	a.flags = GP64()
	Load(Param("flags"), a.flags)
	return a
}

// lineState sets up the state a kernel carries from block to block: cbol
// (1 if the block's first byte starts a line, from flags bit 0), ccr (1 if
// the byte before the block is a CR; never so at the start) and dirty (see
// trackDirty), set to dirty0.
func lineState(flags reg.Register, dirty0 uint32) (cbol, ccr, dirty reg.GPVirtual) {
	cbol = GP64()
	MOVQ(flags, cbol)
	ANDQ(U8(1), cbol)
	ccr = GP64()
	XORQ(ccr, ccr)
	dirty = GP64()
	MOVQ(U32(dirty0), dirty)
	return cbol, ccr, dirty
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
// (The AVX-512 Compat loops count down instead: see decodeCompatBody512.)
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

// Loads and stores at the ends of src and dst.
//
// A masked-off lane of an AVX-512 load faults on nothing, but where it
// falls on a page that is not mapped in (the untouched page after a
// buffer, say), the CPU takes a slow assist each time: hundreds of cycles.
// So when a 64-byte window would cross into the next page while the lanes
// that matter do not, loadMaskedZ uses the window that ends at the page
// end instead, and moves the bytes into place with VPCOMPRESSB. Stores
// are not masked at all (see storeLowZ).

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

// storeLowZ stores the lowest n bytes of v at p, n <= room, where room is
// the number of bytes of dst from p on. With 64 bytes of room it stores
// all 64 (past n, dst is scratch space). Otherwise it stores exactly n
// bytes, with plain stores of 32, 16, 8, 4, 2 and 1 bytes: a masked store
// would be shorter, but a later load 4 KiB away from it (as when src and
// dst sit at the same offset in their pages) waits until it is done, which
// takes hundreds of cycles on Zen 4 (BenchmarkAlias).
func storeLowZ(v reg.VecVirtual, n, p, room reg.Register) {
	l := uniq("st")
	CMPQ(room, U8(64))
	JB(LabelRef(l + "_part"))
	VMOVDQU64(v, Mem{Base: p})
	JMP(LabelRef(l + "_done"))

	Label(l + "_part")
	q := GP64()
	MOVQ(p, q)
	y := YMM()
	TESTQ(U32(32), n)
	JZ(LabelRef(l + "_y0"))
	VMOVDQU(v.AsY(), Mem{Base: q})
	VEXTRACTI64X4(U8(1), v, y)
	ADDQ(U8(32), q)
	JMP(LabelRef(l + "_y"))
	Label(l + "_y0")
	VMOVDQU(v.AsY(), y)
	Label(l + "_y")
	x := XMM()
	TESTQ(U32(16), n)
	JZ(LabelRef(l + "_x0"))
	VMOVDQU(y.AsX(), Mem{Base: q})
	VEXTRACTI128(U8(1), y, x)
	ADDQ(U8(16), q)
	JMP(LabelRef(l + "_x"))
	Label(l + "_x0")
	VMOVDQU(y.AsX(), x)
	Label(l + "_x")
	TESTQ(U32(8), n)
	JZ(LabelRef(l + "_8"))
	VMOVQ(x, Mem{Base: q})
	VPSRLDQ(U8(8), x, x)
	ADDQ(U8(8), q)
	Label(l + "_8")
	r := GP64()
	VMOVQ(x, r)
	TESTQ(U32(4), n)
	JZ(LabelRef(l + "_4"))
	MOVL(r.As32(), Mem{Base: q})
	SHRQ(U8(32), r)
	ADDQ(U8(4), q)
	Label(l + "_4")
	TESTQ(U32(2), n)
	JZ(LabelRef(l + "_2"))
	MOVW(r.As16(), Mem{Base: q})
	SHRQ(U8(16), r)
	ADDQ(U8(2), q)
	Label(l + "_2")
	TESTQ(U32(1), n)
	JZ(LabelRef(l + "_done"))
	MOVB(r.As8(), Mem{Base: q})
	Label(l + "_done")
}
