// Command _asm generates the SIMD kernels of package dot with avo.
//
//	cd dot/_asm && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg dot
//
// Every kernel has the same shape:
//
//	func k(dst, src []byte, flags uint64) (nDst, nSrc int)
//
// flags bit 0 says src starts a line; bits 1 and up hold the Mode (0 Compat,
// 1 Strict, 2 Raw). Each decoder has a twin that keeps a line limit too (see
// lineLimit):
//
//	func k(dst, src []byte, flags uint64, lim, limFast int, p *int) (nDst, nSrc int)
//
// A kernel decodes or encodes a prefix of src into dst
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

const (
	signature    = "func(dst, src []byte, flags uint64) (nDst, nSrc int)"
	decSignature = "func(dst, src []byte, flags uint64, lim, limFast int, p *int) (nDst, nSrc int)"
)

// Modes, as in package dot.
const (
	compat = iota
	strict
	raw
)

var modeName = [...]string{compat: "compat", strict: "strict", raw: "raw"}

func main() {
	ConstraintExpr("!purego")
	decodeAVX512(false)
	decodeAVX512(true)
	encodeAVX512()
	decodeAVX2(false)
	decodeAVX2(true)
	encodeAVX2()
	crlfKernel("crlfAVX512", 64)
	crlfKernel("crlfAVX2", 32)
	Generate()
}

// args holds the registers every kernel starts from.
type args struct {
	dst, dstN, src, srcN, flags reg.GPVirtual
}

// begin starts the kernel name (doc describes it) and loads its arguments.
// With ends, dstN and srcN become the ends of dst and src; otherwise they
// hold the lengths.
func begin(name, doc, sig string, ends bool) args {
	TEXT(name, NOSPLIT, sig)
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

// lineLimit is a decoder's line limit, in the twin kernels (of their own:
// every register counts) that keep it. The kernel keeps r, the bytes of the
// current line before the block at hand (since the last LF: a CR is
// counted), and stops in front of the first byte of a line past the limit:
// the Go side hands it to the generic kernel, which reports it. The bytes of
// a block before its first line ending (a CRLF's CR, or an LF that ends a
// line: "term") are within the limit if r+tz(term) <= lim. A block (of size
// bytes) cannot break the limit while r <= limFast = lim-size: that holds at
// the start of every block of the fast paths (a block with an LF leaves r
// below size, and lim is at least twice size), and the paths that can break
// it hand the next block to the general path, which checks exactly. *p
// holds r at the start of src, and the kernel leaves there r at the end of
// what it consumed. The lean loops (decodeBody512, decodeCompatFastY) may
// keep no count at all: they are entered only where no line they can take
// can pass the limit, and make r exact from the input where they leave.
type lineLimit struct {
	r            reg.GPVirtual // r, or nil if r is kept in the stack frame
	rm           Mem
	lim, limFast Mem
	ones         Mem // all ones, for ANDN
}

// newLineLimit loads the limit's arguments, with r in a register, or with
// inMem in the stack frame (where a kernel has no register to spare).
func newLineLimit(inMem bool) *lineLimit {
	l := &lineLimit{lim: paramMem("lim"), limFast: paramMem("limFast"), ones: allOnes()}
	ptr := Load(Param("p"), GP64())
	if inMem {
		l.rm = AllocLocal(8)
		t := GP64()
		MOVQ(Mem{Base: ptr}, t)
		MOVQ(t, l.rm)
	} else {
		l.r = GP64()
		MOVQ(Mem{Base: ptr}, l.r)
	}
	return l
}

var onesMem *Mem

// allOnes is a read-only 8-byte constant with every bit set.
func allOnes() Mem {
	if onesMem == nil {
		m := GLOBL("allOnes", RODATA|NOPTR)
		DATA(0, U64(^uint64(0)))
		onesMem = &m
	}
	return *onesMem
}

// paramMem is the memory operand of an integer argument.
func paramMem(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// load returns a register holding r.
func (l *lineLimit) load() reg.GPVirtual {
	if l.r != nil {
		return l.r
	}
	t := GP64()
	MOVQ(l.rm, t)
	return t
}

// store makes t, from load, r.
func (l *lineLimit) store(t reg.GPVirtual) {
	if l.r == nil {
		MOVQ(t, l.rm)
	}
}

// check jumps to slow unless no line can break the limit in the block.
func (l *lineLimit) check(slow string) {
	CMPQ(l.load(), l.limFast)
	JGT(LabelRef(slow))
}

// checkBy is check for n more bytes without CR or LF after the block.
func (l *lineLimit) checkBy(n int, slow string) {
	t := GP64()
	LEAQ(Mem{Base: l.load(), Disp: n}, t)
	CMPQ(t, l.limFast)
	JGT(LabelRef(slow))
}

// bail adds to bail the position of the first byte past the limit, if the
// block (with line endings at term) has one: lim-r, if the first line
// ending is after it (lim-r < 64 then). term is clobbered.
func (l *lineLimit) bail(term, bail reg.Register) {
	skip := uniq("lim")
	t := GP64()
	MOVQ(l.lim, t)
	SUBQ(l.load(), t)
	TZCNTQ(term, term)
	CMPQ(term, t)
	JLE(LabelRef(skip))
	BTSQ(t, bail)
	Label(skip)
}

// next moves r over a block of size bytes (32 or 64) whose last LF, if it
// has one, is the last set bit of lf (at size-1-x, with x its leading
// zeros in size bits: r becomes x; else r grows by size), and goes on at
// ok, or, where the next block might break the limit, at slow (if not
// empty). It has no branch on lf: in mail, about every other block has no
// LF.
func (l *lineLimit) next(lf Op, size int, ok, slow string) {
	x, m := GP64(), GP64()
	if size == 32 {
		LZCNTL(lf, x.As32()) // CF: lf is 0
	} else {
		LZCNTQ(lf, x)
	}
	SBBQ(m, m) // -1 if lf is 0
	t := l.load()
	ANDQ(m, t)
	ADDQ(x, t)
	l.store(t)
	if slow != "" {
		l.check(slow)
	}
	JMP(LabelRef(ok))
}

// set makes x r.
func (l *lineLimit) set(x Op) {
	if l.r != nil {
		MOVQ(x, l.r)
	} else {
		MOVQ(x, l.rm)
	}
}

// finish stores r in *p, at the kernel's end.
func (l *lineLimit) finish() {
	if l == nil {
		return
	}
	t := l.load()
	ptr := Load(Param("p"), GP64())
	MOVQ(t, Mem{Base: ptr})
}

// consume moves r over the first n bytes (n < the block size) of a block
// with LFs at lf, where the kernel stops.
func (l *lineLimit) consume(lf, n reg.Register) {
	nolf, done := uniq("nolf"), uniq("consumed")
	x := GP64()
	BZHIQ(n, lf, x)
	TESTQ(x, x)
	JZ(LabelRef(nolf))
	LZCNTQ(x, x) // the last LF is at 63-x
	t := GP64()
	LEAQ(Mem{Base: n, Index: x, Scale: 1, Disp: -64}, t)
	l.set(t)
	JMP(LabelRef(done))
	Label(nolf)
	l.advance(n)
	Label(done)
}

// advance adds n to r (n bytes of the line, none of them an LF).
func (l *lineLimit) advance(n Op) {
	switch {
	case l == nil:
	case l.r != nil:
		ADDQ(n, l.r)
	default:
		ADDQ(n, l.rm)
	}
}

// trackDirty records in dirty whether the block with masks lf and cr has
// a CR or LF. The copy loops for long lines are tried only when dirty is
// 0. With history 1, dirty is simply lf|cr; with a longer history (a bit
// mask, one bit per block) the loops wait for that many line-free blocks
// in a row, so that on short lines the branch that tries them is not taken.
// (The AVX-512 kernels count down instead: see decodeBody512.)
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
