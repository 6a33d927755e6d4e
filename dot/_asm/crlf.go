package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const crlfSignature = "func(text []byte, limFast int, r *int, cr *uint64) (n int)"

// crlfKernel generates a kernel for dot.LineState.Clean: it reads text a
// block (size bytes: 64 with AVX-512, 32 with AVX2) at a time while the
// block is CRLF text (its LFs are exactly the bytes after its CRs and
// after a CR that ends the block before) and cannot break the line limit,
// and returns how many bytes it read, a multiple of size. It writes
// nothing. *r holds the bytes since the last LF (a CR included) and *cr 1
// if the byte before text is a CR; the kernel keeps both up to date. A
// block cannot break the limit while r <= limFast (the limit less size).
func crlfKernel(name string, size int) {
	TEXT(name, NOSPLIT, crlfSignature)
	Doc(name + " finds clean CRLF text (see dot.LineState.Clean).")
	Pragma("noescape")
	src := Load(Param("text").Base(), GP64())
	end := Load(Param("text").Len(), GP64())
	LEAQ(Mem{Base: src, Index: end, Scale: 1, Disp: -size}, end) // the last block start
	rp := Load(Param("r"), GP64())
	r := GP64()
	MOVQ(Mem{Base: rp}, r)
	cp := Load(Param("cr"), GP64())
	ccr := GP64()
	MOVQ(Mem{Base: cp}, ccr)
	limFast := paramMem("limFast")

	var vlf, vcr reg.VecVirtual
	if size == 64 {
		vlf, vcr = broadcastZ('\n'), broadcastZ('\r')
	} else {
		vlf, vcr = broadcastY('\n'), broadcastY('\r')
	}
	p := name
	Label(p + "_loop")
	CMPQ(src, end)
	JGT(LabelRef(p + "_done"))
	CMPQ(r, limFast)
	JGT(LabelRef(p + "_done"))
	var lf, cr reg.GPVirtual
	if size == 64 {
		v := ZMM()
		VMOVDQU64(Mem{Base: src}, v)
		lf, cr = cmpMaskZ(v, vlf), cmpMaskZ(v, vcr)
	} else {
		v := YMM()
		VMOVDQU(Mem{Base: src}, v)
		lf, cr = cmpMaskY(v, vlf), cmpMaskY(v, vcr)
	}
	// Clean: an LF after every CR (the block's last one: in the next
	// block) and nowhere else.
	t := GP64()
	LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, t)
	if size == 32 {
		ANDL(U32(0xffffffff), t.As32()) // the last CR's bit
	}
	CMPQ(t, lf)
	JNE(LabelRef(p + "_done"))
	MOVQ(cr, ccr)
	SHRQ(U8(size-1), ccr)
	// r: the bytes after the block's last LF, or size more.
	x, m := GP64(), GP64()
	if size == 32 {
		LZCNTL(lf.As32(), x.As32())
	} else {
		LZCNTQ(lf, x)
	}
	SBBQ(m, m) // -1 if lf is 0
	ANDQ(m, r)
	ADDQ(x, r)
	ADDQ(U8(size), src)
	JMP(LabelRef(p + "_loop"))

	Label(p + "_done")
	VZEROUPPER()
	rp = Load(Param("r"), GP64())
	MOVQ(r, Mem{Base: rp})
	cp = Load(Param("cr"), GP64())
	MOVQ(ccr, Mem{Base: cp})
	s0 := Load(Param("text").Base(), GP64())
	SUBQ(s0, src)
	Store(src, ReturnIndex(0))
	RET()
}
