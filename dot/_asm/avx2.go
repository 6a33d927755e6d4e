package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// broadcastY returns a YMM register holding c in every byte.
func broadcastY(c byte) reg.VecVirtual {
	t := GP32()
	MOVL(U32(c), t)
	x := XMM()
	MOVD(t, x)
	y := YMM()
	VPBROADCASTB(x, y)
	return y
}

// cmpMaskY returns a general register with bit i set where byte i of v
// equals byte i of c (32 bits).
func cmpMaskY(v, c reg.VecVirtual) reg.GPVirtual {
	e := YMM()
	VPCMPEQB(c, v, e)
	m := GP64()
	VPMOVMSKB(e, m.As32())
	return m
}

// decodeAVX2 generates the AVX2 decoder: the masks of decodeAVX512 on
// 32-byte blocks, and compaction by overlapping 32-byte stores, one per
// run of kept bytes. It stops with less than 64 bytes of src or of room
// left: the stores may write up to 32 bytes past the output (inside dst).
func decodeAVX2() {
	TEXT("decodeAVX2", NOSPLIT, signature)
	Doc("decodeAVX2 decodes with AVX2 (see the package's kernel notes).")
	dst := Load(Param("dst").Base(), GP64())
	dstEnd := Load(Param("dst").Len(), GP64())
	ADDQ(dst, dstEnd)
	src := Load(Param("src").Base(), GP64())
	srcEnd := Load(Param("src").Len(), GP64())
	ADDQ(src, srcEnd)
	flags := Load(Param("flags"), GP64())

	cbol := GP64()
	MOVQ(flags, cbol)
	ANDQ(U8(1), cbol)
	ccr := GP64()
	XORQ(ccr, ccr)
	ylf, ycr, ydot := broadcastY('\n'), broadcastY('\r'), broadcastY('.')

	modes := []int{compat, strict, raw}
	labels := dispatchMode("dec2", flags, modes)
	for i, m := range modes {
		Label(labels[i])
		p := "dec2_" + modeName[m]
		loop := p + "_loop"
		Label(loop)
		t := GP64()
		MOVQ(srcEnd, t)
		SUBQ(src, t)
		CMPQ(t, U8(64))
		JLT(LabelRef("dec2_done"))
		MOVQ(dstEnd, t)
		SUBQ(dst, t)
		CMPQ(t, U8(64))
		JLT(LabelRef("dec2_done"))

		v, vn := YMM(), YMM()
		VMOVDQU(Mem{Base: src}, v)
		VMOVDQU(Mem{Base: src, Disp: 1}, vn)
		lf := cmpMaskY(v, ylf)
		cr := cmpMaskY(v, ycr)
		dot := cmpMaskY(v, ydot)
		nlf := cmpMaskY(vn, ylf)
		ncr := cmpMaskY(vn, ycr)

		bol := GP64()
		LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol)
		dotB := GP64()
		MOVQ(dot, dotB)
		ANDQ(bol, dotB)
		bail := GP64()
		ORQ(nlf, ncr)
		MOVQ(ncr, bail)
		ANDQ(dotB, bail)
		if m == compat {
			ANDQ(lf, bol)
			ORQ(bol, bail)
		} else {
			pcr := GP64()
			LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr)
			ANDNQ(lf, pcr, t)
			ORQ(t, bail)
			ANDNQ(cr, nlf, t)
			ORQ(t, bail)
		}
		BTSQ(U8(32), bail)
		cut := GP64()
		TZCNTQ(bail, cut)

		del := GP64()
		switch m {
		case compat:
			MOVQ(cr, del)
			ANDQ(nlf, del)
			ORQ(dotB, del)
		case strict:
			MOVQ(cr, del)
			ORQ(dotB, del)
		case raw:
			MOVQ(dotB, del)
		}
		BZHIQ(cut, del, del)

		// Store the block, then each run after a deleted byte over the
		// tail of the previous store.
		VMOVDQU(v, Mem{Base: dst})
		s := GP64() // start of the current run in the block
		XORQ(s, s)
		TESTQ(del, del)
		JZ(LabelRef(p + "_runs_done"))
		Label(p + "_runs")
		j := GP64()
		TZCNTQ(del, j)
		BLSRQ(del, del)
		ADDQ(j, dst)
		SUBQ(s, dst)
		LEAQ(Mem{Base: j, Disp: 1}, s)
		w := YMM()
		VMOVDQU(Mem{Base: src, Index: s, Scale: 1}, w)
		VMOVDQU(w, Mem{Base: dst})
		TESTQ(del, del)
		JNZ(LabelRef(p + "_runs"))
		Label(p + "_runs_done")
		ADDQ(cut, dst)
		SUBQ(s, dst)
		ADDQ(cut, src)
		CMPQ(cut, U8(32))
		JNE(LabelRef("dec2_done"))
		SHRQ(U8(31), lf)
		MOVQ(lf, cbol)
		if m != compat {
			SHRQ(U8(31), cr)
			MOVQ(cr, ccr)
		}
		JMP(LabelRef(loop))
	}

	Label("dec2_done")
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}

// encodeAVX2 generates the AVX2 encoder: the masks of encodeAVX512 on
// 32-byte blocks; a block is stored whole, then for each insertion the
// inserted byte and the rest of the block after it. It stops with less
// than 64 bytes of src or 96 bytes of room left: the stores may write up
// to 32 bytes past the output (inside dst).
func encodeAVX2() {
	TEXT("encodeAVX2", NOSPLIT, signature)
	Doc("encodeAVX2 encodes with AVX2 (see the package's kernel notes).")
	dst := Load(Param("dst").Base(), GP64())
	dstEnd := Load(Param("dst").Len(), GP64())
	ADDQ(dst, dstEnd)
	src := Load(Param("src").Base(), GP64())
	srcEnd := Load(Param("src").Len(), GP64())
	ADDQ(src, srcEnd)
	flags := Load(Param("flags"), GP64())

	cbol := GP64()
	MOVQ(flags, cbol)
	ANDQ(U8(1), cbol)
	ccr := GP64()
	XORQ(ccr, ccr)
	ylf, ycr, ydot := broadcastY('\n'), broadcastY('\r'), broadcastY('.')

	SHRQ(U8(1), flags)
	TESTQ(flags, flags)
	JNZ(LabelRef("enc2_strict"))
	JMP(LabelRef("enc2_compat"))

	for _, m := range []int{compat, strict} {
		p := "enc2_" + modeName[m]
		loop := p + "_loop"
		Label(p)
		Label(loop)
		t := GP64()
		MOVQ(srcEnd, t)
		SUBQ(src, t)
		CMPQ(t, U8(64))
		JLT(LabelRef("enc2_done"))
		MOVQ(dstEnd, t)
		SUBQ(dst, t)
		CMPQ(t, U8(96))
		JLT(LabelRef("enc2_done"))

		v := YMM()
		VMOVDQU(Mem{Base: src}, v)
		var nlf reg.GPVirtual
		if m == strict {
			vn := YMM()
			VMOVDQU(Mem{Base: src, Disp: 1}, vn)
			nlf = cmpMaskY(vn, ylf)
		}
		lf := cmpMaskY(v, ylf)
		cr := cmpMaskY(v, ycr)
		dot := cmpMaskY(v, ydot)

		bol := GP64()
		LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol)
		pcr := GP64()
		LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr)
		ins := GP64()
		MOVQ(dot, ins)
		ANDQ(bol, ins)
		bail := GP64()
		if m == compat {
			ANDNQ(lf, pcr, t)
			ORQ(t, ins)
			MOVQ(cr, bail)
			ANDQ(pcr, bail)
		} else {
			ANDNQ(lf, pcr, bail)
			ANDNQ(cr, nlf, t)
			ORQ(t, bail)
		}
		BTSQ(U8(32), bail)
		cut := GP64()
		TZCNTQ(bail, cut)
		BZHIQ(cut, ins, ins)

		VMOVDQU(v, Mem{Base: dst})
		s := GP64()
		XORQ(s, s)
		TESTQ(ins, ins)
		JZ(LabelRef(p + "_runs_done"))
		Label(p + "_runs")
		j := GP64()
		TZCNTQ(ins, j)
		BLSRQ(ins, ins)
		ADDQ(j, dst)
		SUBQ(s, dst)
		if m == compat {
			// CR before an LF, '.' before a dot.
			c := GP32()
			MOVBLZX(Mem{Base: src, Index: j, Scale: 1}, c)
			ch := GP32()
			MOVL(U32('.'), ch)
			cr32 := GP32()
			MOVL(U32('\r'), cr32)
			CMPL(c, U8('\n'))
			CMOVLEQ(cr32, ch)
			MOVB(ch.As8(), Mem{Base: dst})
		} else {
			MOVB(U8('.'), Mem{Base: dst})
		}
		INCQ(dst)
		MOVQ(j, s)
		w := YMM()
		VMOVDQU(Mem{Base: src, Index: s, Scale: 1}, w)
		VMOVDQU(w, Mem{Base: dst})
		TESTQ(ins, ins)
		JNZ(LabelRef(p + "_runs"))
		Label(p + "_runs_done")
		ADDQ(cut, dst)
		SUBQ(s, dst)
		ADDQ(cut, src)
		CMPQ(cut, U8(32))
		JNE(LabelRef("enc2_done"))
		SHRQ(U8(31), lf)
		MOVQ(lf, cbol)
		SHRQ(U8(31), cr)
		MOVQ(cr, ccr)
		JMP(LabelRef(loop))
	}

	Label("enc2_done")
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}
