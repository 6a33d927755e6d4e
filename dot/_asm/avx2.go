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

// decodeAVX2 generates the AVX2 decoder: 64-byte blocks with nothing but
// line endings (see decode64Y), and otherwise the masks of decodeAVX512 on
// 32-byte blocks. A block with at most one byte to delete is stored whole,
// then its rest is stored again one byte lower over the deleted byte.
// Otherwise each 8-byte group is packed with a PSHUFB whose control comes
// from a 256-entry table indexed by the group's deletion mask, and stored
// with an 8-byte store; the output advances by the number of bytes kept.
// It stops with less than 65 bytes of src or 64 bytes of room left: the
// stores may write up to 32 bytes past the output (inside dst).
//
// With limited, it generates the twin that keeps a line limit.
func decodeAVX2(limited bool) {
	name, sig, pre, doc := "decodeAVX2", signature, "dec2", "decodeAVX2 decodes with AVX2 (see the package's kernel notes)."
	if limited {
		name, sig, pre, doc = "decodeLinesAVX2", decSignature, "dec2l", "decodeLinesAVX2 is decodeAVX2 with a line limit."
	}
	done := pre + "_done"
	table := compactTable()

	a := begin(name, doc, sig, true)
	dst, dstEnd, src, srcEnd, flags := a.dst, a.dstN, a.src, a.srcN, a.flags
	cbol, ccr, dirty := lineState(flags, 1) // dirty: see trackDirty
	ylf, ycr, ydot := broadcastY('\n'), broadcastY('\r'), broadcastY('.')
	var lim *lineLimit
	if limited {
		lim = newLineLimit(true)
	}

	modes := []int{compat, strict, raw}
	labels := dispatchMode(pre, flags, modes)
	for i, m := range modes {
		Label(labels[i])
		p := labels[i]
		loop := p + "_loop"
		loop64 := p + "_loop64"
		block32 := p + "_block32"
		Label(loop64)
		needLeft(src, srcEnd, U32(66), dst, dstEnd, U32(64), loop)
		switch {
		case m == raw:
			fastEntry(src, dirty, p, p+"_old")
			decodeRawFastY(p, p+"_old", loop, src, dst, srcEnd, dstEnd, cbol, ccr, dirty, ylf, ycr, ydot, lim)
			Label(p + "_old")
		default: // Compat and Strict: the same output for blocks of CR-LF pairs
			fastEntry(src, dirty, p, p+"_old")
			decodeCompatFastY(p, p+"_old", loop, src, dst, srcEnd, dstEnd, cbol, ccr, dirty, ylf, ycr, ydot, lim)
			Label(p + "_old")
		}
		cleanLoopY(p, loop64, src, dst, srcEnd, dstEnd, cbol, dirty, ylf, ycr, lim)
		decode64Y(m, p, loop64, block32, src, dst, cbol, ccr, dirty, ylf, ycr, ydot, lim)

		// The 32-byte blocks: near the ends of src and dst, and where a
		// 64-byte block has anything but line endings.
		Label(loop)
		needLeft(src, srcEnd, U8(65), dst, dstEnd, U8(64), done)
		Label(block32)
		t := GP64() // a temporary

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
		outOfLine := func() {}
		if lim != nil {
			// A block that might break the line limit stops at the byte
			// past it, if it has one (out of line, after the loop).
			lim.check(p + "_lines")
			Label(p + "_linesok")
			outOfLine = func() {
				Label(p + "_lines")
				term := GP64() // line endings: CRLFs and LFs
				MOVQ(cr, term)
				if m == compat {
					ANDQ(nlf, term)
				}
				ORQ(lf, term)
				lim.bail(term, bail)
				JMP(LabelRef(p + "_linesok"))
			}
		}
		cut := GP64()
		TZCNTQ(bail, cut)

		// gone: deleted bytes, and every byte from cut on.
		gone := GP64()
		switch m {
		case compat:
			MOVQ(cr, gone)
			ANDQ(nlf, gone)
			ORQ(dotB, gone)
		case strict:
			MOVQ(cr, gone)
			ORQ(dotB, gone)
		case raw:
			MOVQ(dotB, gone)
		}
		// The carries into the next block (used only if this one is whole).
		trackDirty(dirty, lf, cr, 7)
		var lfm Mem // the block's LFs, for the line limit after the block
		if lim != nil {
			lfm = AllocLocal(8)
			MOVQ(lf, lfm)
		}
		SHRQ(U8(31), lf)
		MOVQ(lf, cbol)
		if m != compat {
			SHRQ(U8(31), cr)
			MOVQ(cr, ccr)
		}
		BZHIQ(cut, gone, gone)
		// At most one byte to delete (the usual case: a CRLF every line):
		// store the block, then the rest of it over the deleted byte.
		BLSRQ(gone, t)
		JNZ(LabelRef(p + "_table"))
		{
			j := GP64()
			MOVQ(gone, j)
			BTSQ(U8(32), j)
			TZCNTQ(j, j)
			VMOVDQU(v, Mem{Base: dst})
			w := YMM()
			VMOVDQU(Mem{Base: src, Index: j, Scale: 1, Disp: 1}, w)
			VMOVDQU(w, Mem{Base: dst, Index: j, Scale: 1})
			POPCNTQ(gone, j)
			ADDQ(cut, dst)
			SUBQ(j, dst)
			JMP(LabelRef(p + "_next"))
		}

		// Otherwise pack each 8-byte group by table.
		Label(p + "_table")
		MOVQ(I32(-1), t)
		SHLXQ(cut, t, t)
		ORQ(t, gone)

		// The four 8-byte groups are packed and stored at offsets computed
		// off the dst chain: dst advances once per block.
		var ms [4]reg.GPVirtual
		group := func(g int) {
			ms[g] = GP64()
			if g == 0 {
				MOVBQZX(gone.As8(), ms[g])
			} else {
				MOVQ(gone, ms[g])
				SHRQ(U8(8*g), ms[g])
				MOVBQZX(ms[g].As8(), ms[g])
			}
		}
		// next returns off + 8 - (bytes deleted from group g).
		next := func(off reg.GPVirtual, g int) reg.GPVirtual {
			c := GP64()
			POPCNTQ(ms[g], c)
			n := GP64()
			if off == nil {
				MOVQ(U32(8), n)
			} else {
				LEAQ(Mem{Base: off, Disp: 8}, n)
			}
			SUBQ(c, n)
			return n
		}
		ptab := GP64()
		LEAQ(table, ptab)
		group(0)
		group(1)
		o1 := next(nil, 0)
		compactLane(v.AsX(), ms[0], ms[1], dst, nil, o1, ptab)
		o2 := next(o1, 1)
		group(2)
		group(3)
		o3 := next(o2, 2)
		hi := XMM()
		VEXTRACTI128(U8(1), v, hi)
		compactLane(hi, ms[2], ms[3], dst, o2, o3, ptab)
		total := next(o3, 3)
		ADDQ(total, dst)

		Label(p + "_next")
		// src advances by a constant on the loop path: a data-dependent
		// advance would chain every block's loads to the previous block's
		// masks.
		CMPQ(cut, U8(32))
		JNE(LabelRef(p + "_partial"))
		ADDQ(U8(32), src)
		if lim != nil {
			lim.next(lfm, 32, loop64, "") // (every block checks)
		} else {
			JMP(LabelRef(loop64))
		}
		Label(p + "_partial")
		ADDQ(cut, src)
		if lim != nil {
			x := GP64()
			MOVQ(lfm, x)
			lim.consume(x, cut)
		}
		JMP(LabelRef(done))
		outOfLine()
	}

	Label(done)
	lim.finish()
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}

var compactTab *Mem // compactTable's, once made

// compactTable returns a table of 8-byte PSHUFB controls: entry m (of 256)
// lists, in order, the positions of the clear bits of m, for the low group
// (0-7) of a 16-byte lane; entry 256+m the same for the high group (8-15).
func compactTable() Mem {
	if compactTab != nil {
		return *compactTab
	}
	t := GLOBL("compactTable", RODATA|NOPTR)
	compactTab = &t
	for m := 0; m < 256; m++ {
		DATA(8*m, U64(compactEntry(m, 0)))
	}
	for m := 0; m < 256; m++ {
		DATA(2048+8*m, U64(compactEntry(m, 8)))
	}
	return t
}

func compactEntry(m, base int) uint64 {
	var e uint64
	n := 0
	for b := 0; b < 8; b++ {
		if m&(1<<b) == 0 {
			e |= uint64(base+b) << (8 * n)
			n++
		}
	}
	for ; n < 8; n++ {
		e |= 0x80 << (8 * n) // PSHUFB writes zero
	}
	return e
}

// compactLane packs the bytes of the 16-byte lane x whose bits are clear
// in the group masks mlo and mhi with PSHUFB, and stores the low group at
// dst+olo (dst if olo is nil) and the high one at dst+ohi.
func compactLane(x reg.Register, mlo, mhi reg.GPVirtual, dst, olo, ohi, ptab reg.Register) {
	ctrl := XMM()
	VMOVQ(Mem{Base: ptab, Index: mlo, Scale: 8}, ctrl)
	VPINSRQ(U8(1), Mem{Base: ptab, Index: mhi, Scale: 8, Disp: 2048}, ctrl, ctrl)
	out := XMM()
	VPSHUFB(ctrl, x, out)
	if olo == nil {
		VMOVQ(out, Mem{Base: dst})
	} else {
		VMOVQ(out, Mem{Base: dst, Index: olo, Scale: 1})
	}
	VPEXTRQ(U8(1), out, Mem{Base: dst, Index: ohi, Scale: 1})
}

// encodeAVX2 generates the AVX2 encoder: 64-byte blocks with nothing to
// insert (see encode64Y), and otherwise the masks of encodeAVX512 on
// 32-byte blocks; a block is stored whole, then for each insertion the
// inserted byte and the rest of the block after it. It stops with less
// than 64 bytes of src or 96 bytes of room left: the stores may write up
// to 32 bytes past the output (inside dst).
func encodeAVX2() {
	a := begin("encodeAVX2", "encodeAVX2 encodes with AVX2 (see the package's kernel notes).", signature, true)
	dst, dstEnd, src, srcEnd, flags := a.dst, a.dstN, a.src, a.srcN, a.flags
	cbol, ccr, dirty := lineState(flags, 1) // dirty: see trackDirty
	ylf, ycr, ydot := broadcastY('\n'), broadcastY('\r'), broadcastY('.')

	SHRQ(U8(1), flags)
	TESTQ(flags, flags)
	JNZ(LabelRef("enc2_strict"))
	JMP(LabelRef("enc2_compat"))

	for _, m := range []int{compat, strict} {
		p := "enc2_" + modeName[m]
		loop := p + "_loop"
		loop64 := p + "_loop64"
		block32 := p + "_block32"
		Label(p)
		Label(loop64)
		needLeft(src, srcEnd, U32(65), dst, dstEnd, U32(96), loop)
		fastEntry(src, dirty, p, p+"_old")
		encodeFastY(m, p, p+"_old", loop, src, dst, srcEnd, dstEnd, cbol, ccr, dirty, ylf, ycr, ydot)
		Label(p + "_old")
		cleanLoopY(p, loop64, src, dst, srcEnd, dstEnd, cbol, dirty, ylf, ycr, nil)
		encode64Y(m, loop64, block32, src, dst, cbol, ccr, dirty, ylf, ycr, ydot)

		// The 32-byte blocks: near the ends of src and dst, and where a
		// 64-byte block has anything to insert.
		Label(loop)
		needLeft(src, srcEnd, U8(64), dst, dstEnd, U8(96), "enc2_done")
		Label(block32)
		t := GP64() // a temporary

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
		CMPQ(cut, U8(32))
		JNE(LabelRef(p + "_partial"))
		ADDQ(U8(32), src)
		trackDirty(dirty, lf, cr, 7)
		SHRQ(U8(31), lf)
		MOVQ(lf, cbol)
		SHRQ(U8(31), cr)
		MOVQ(cr, ccr)
		JMP(LabelRef(loop64))
		Label(p + "_partial")
		ADDQ(cut, src)
		JMP(LabelRef("enc2_done"))
	}

	Label("enc2_done")
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}

// needLeft goes to done unless at least nSrc bytes of src and nDst bytes
// of dst are left (immediates: U8 or U32).
func needLeft(src, srcEnd reg.Register, nSrc Op, dst, dstEnd reg.Register, nDst Op, done string) {
	t := GP64()
	MOVQ(srcEnd, t)
	SUBQ(src, t)
	CMPQ(t, nSrc)
	JLT(LabelRef(done))
	MOVQ(dstEnd, t)
	SUBQ(dst, t)
	CMPQ(t, nDst)
	JLT(LabelRef(done))
}

// cleanLoopY copies 32-byte blocks inside a long line: once three blocks
// in a row had no CR or LF (dirty is 0, see trackDirty) and the next one
// does not start a line, a block with no CR or LF is stored as it is. Then
// blocks go four at a time (128 bytes, which need no byte after them)
// while none has a byte <= '\r' (their unsigned minimum, one compare),
// which leaves cbol and dirty as they are. It returns to loop, which
// checks the bounds, after that, and falls through at the first other
// block.
//
// With a line limit (lim not nil), only blocks that the limit allows whole
// are copied.
func cleanLoopY(p, loop string, src, dst, srcEnd, dstEnd, cbol, dirty reg.Register, ylf, ycr reg.VecVirtual, lim *lineLimit) {
	t := GP64()
	MOVQ(cbol, t)
	ORQ(dirty, t)
	JNZ(LabelRef(p + "_block"))
	v, e, f := YMM(), YMM(), YMM()
	VMOVDQU(Mem{Base: src}, v)
	VPCMPEQB(ylf, v, e)
	VPCMPEQB(ycr, v, f)
	VPOR(e, f, e)
	VPTEST(e, e)
	JNZ(LabelRef(p + "_block"))
	if lim != nil {
		lim.check(p + "_block")
	}
	VMOVDQU(v, Mem{Base: dst})
	ADDQ(U8(32), src)
	ADDQ(U8(32), dst)
	lim.advance(U8(32))
	// Every byte is > '\r' if max(byte, '\r'+1) is the byte.
	c := GP32()
	MOVL(U32('\r'+1), c)
	g := XMM()
	VMOVD(c, g)
	h := YMM()
	VPBROADCASTB(g, h)

	Label(p + "_clean4")
	LEAQ(Mem{Base: src, Disp: 128}, t)
	CMPQ(t, srcEnd)
	JA(LabelRef(loop))
	LEAQ(Mem{Base: dst, Disp: 128}, t)
	CMPQ(t, dstEnd)
	JA(LabelRef(loop))
	if lim != nil {
		lim.checkBy(96, loop)
	}
	w, x, y := YMM(), YMM(), YMM()
	VMOVDQU(Mem{Base: src}, v)
	VMOVDQU(Mem{Base: src, Disp: 32}, w)
	VMOVDQU(Mem{Base: src, Disp: 64}, x)
	VMOVDQU(Mem{Base: src, Disp: 96}, y)
	VPMINUB(v, w, e)
	VPMINUB(x, y, f)
	VPMINUB(e, f, e)
	VPMAXUB(e, h, f)
	VPCMPEQB(e, f, f)
	VPMOVMSKB(f, c)
	CMPL(c, I32(-1))
	JNE(LabelRef(loop))
	VMOVDQU(v, Mem{Base: dst})
	VMOVDQU(w, Mem{Base: dst, Disp: 32})
	VMOVDQU(x, Mem{Base: dst, Disp: 64})
	VMOVDQU(y, Mem{Base: dst, Disp: 96})
	ADDQ(U32(128), src)
	ADDQ(U32(128), dst)
	lim.advance(U32(128))
	JMP(LabelRef(p + "_clean4"))
	Label(p + "_block")
}

// mask64Y returns the 64-bit mask of the bytes of the 64 at a and b (the
// low and high 32) for which eq sets a vector register.
func mask64Y(a, b reg.VecVirtual) reg.GPVirtual {
	lo, hi := GP64(), GP64()
	VPMOVMSKB(a, lo.As32())
	VPMOVMSKB(b, hi.As32())
	SHLQ(U8(32), hi)
	ORQ(hi, lo)
	return lo
}

// decode64Y is the AVX2 decoders' main loop body: a 64-byte block whose
// only work is line endings (no line-leading dot, no bare CR or LF, in
// Compat mode no LF at the start of a line, at most two CRs to delete,
// and, with a line limit, no line that might pass it) is decoded with
// O(1) work and no branch on its lines: its masks (LFs, CRs of CRLFs,
// dots) are made once for the 64 bytes, and its output is blended from
// the block and its copies one and two bytes on, by position, and stored
// in two stores. Any other block goes to block32, the 32-byte path, which
// handles one 32-byte block and comes back to loop. It needs 66 bytes of
// src and 64 of room in dst.
func decode64Y(m int, p, loop, block32 string, src, dst, cbol, ccr, dirty reg.Register, ylf, ycr, ydot reg.VecVirtual, lim *lineLimit) {
	if lim != nil {
		lim.checkBy(32, block32) // r <= lim-64
	}
	v0, v1, n0, n1 := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(Mem{Base: src}, v0)
	VMOVDQU(Mem{Base: src, Disp: 32}, v1)
	VMOVDQU(Mem{Base: src, Disp: 1}, n0)
	VMOVDQU(Mem{Base: src, Disp: 33}, n1)
	e0, e1 := YMM(), YMM()
	VPCMPEQB(ylf, v0, e0)
	VPCMPEQB(ylf, v1, e1)
	lf := mask64Y(e0, e1)
	l0, l1 := YMM(), YMM()
	VPCMPEQB(ylf, n0, l0) // the next byte is an LF
	VPCMPEQB(ylf, n1, l1)
	c0, c1 := YMM(), YMM()
	VPCMPEQB(ycr, v0, c0)
	VPCMPEQB(ycr, v1, c1)
	var bareCR reg.GPVirtual
	if m != compat {
		b0, b1 := YMM(), YMM()
		VPANDN(c0, l0, b0) // a CR whose next byte is not an LF
		VPANDN(c1, l1, b1)
		bareCR = mask64Y(b0, b1)
	}
	VPAND(l0, c0, c0)
	VPAND(l1, c1, c1)
	crlf := mask64Y(c0, c1) // the CRs of CRLFs
	VPCMPEQB(ydot, v0, e0)
	VPCMPEQB(ydot, v1, e1)
	dot := mask64Y(e0, e1)

	bol := GP64()
	LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol) // line starts
	ANDQ(bol, dot)                                  // leading dots
	if m == compat {
		// net/textproto alternates at an LF that starts a line.
		ANDQ(lf, bol)
		ORQ(bol, dot)
	} else {
		// A bare CR, or an LF not after a CR.
		pcr := GP64()
		LEAQ(Mem{Base: ccr, Index: crlf, Scale: 2}, pcr)
		ANDNQ(lf, pcr, pcr)
		ORQ(pcr, dot)
		ORQ(bareCR, dot)
	}
	JNZ(LabelRef(block32))

	if m != raw {
		n := GP64()
		POPCNTQ(crlf, n)
		CMPQ(n, U8(2))
		JA(LabelRef(block32))
		// Output byte k is src[k] before the first deletion (at j1, 64
		// if there is none), src[k+1] from there to the byte before the
		// second (at j2, 65 if there is none: with no deletion the 64th
		// byte stays src[63]), and src[k+2] after it: two blends of the
		// block with its copies one and two bytes on, by comparing k with
		// j1 and j2-1, and no address that waits for the masks.
		j := GP64()
		TZCNTQ(crlf, j)
		x1 := XMM()
		VMOVQ(j, x1)
		y1 := YMM()
		VPBROADCASTB(x1, y1)
		BLSRQ(crlf, j)
		TZCNTQ(j, j) // CF: no second deletion
		ADCQ(U8(0), j)
		DECQ(j)
		x2 := XMM()
		VMOVQ(j, x2)
		y2 := YMM()
		VPBROADCASTB(x2, y2)
		iota := iotaTable()
		for h, vs := range [2][2]reg.VecVirtual{{v0, n0}, {v1, n1}} {
			k := iota.Offset(32 * h)
			sel, out, n2 := YMM(), YMM(), YMM()
			VPCMPGTB(k, y1, sel) // k < j1
			VPBLENDVB(sel, vs[0], vs[1], out)
			VMOVDQU(Mem{Base: src, Disp: 32*h + 2}, n2)
			VPCMPGTB(k, y2, sel) // k < j2-1
			VPBLENDVB(sel, out, n2, out)
			VMOVDQU(out, Mem{Base: dst, Disp: 32 * h})
		}
		ADDQ(U8(64), dst)
		SUBQ(n, dst)
	} else {
		VMOVDQU(v0, Mem{Base: dst})
		VMOVDQU(v1, Mem{Base: dst, Disp: 32})
		ADDQ(U8(64), dst)
	}
	ADDQ(U8(64), src)
	trackDirty(dirty, lf, crlf, 7)
	if m != compat {
		SHRQ(U8(63), crlf)
		MOVQ(crlf, ccr)
	}
	if lim != nil {
		// next needs lf; the new cbol is its top bit.
		t := GP64()
		MOVQ(lf, t)
		SHRQ(U8(63), t)
		MOVQ(t, cbol)
		lim.next(lf, 64, loop, "")
		return
	}
	SHRQ(U8(63), lf)
	MOVQ(lf, cbol)
	JMP(LabelRef(loop))
}

// encode64Y is the AVX2 encoder's main loop body: a 64-byte block with
// nothing to insert and nothing to stop at (no line-leading dot; in Compat
// mode no bare LF and no CR after a CR; in Strict mode no bare CR or LF) is
// stored as it is, from masks made once for the 64 bytes. Any other block
// goes to block32, the 32-byte path, which handles one 32-byte block and
// comes back to loop. It needs 65 bytes of src and 64 of room in dst.
func encode64Y(m int, loop, block32 string, src, dst, cbol, ccr, dirty reg.Register, ylf, ycr, ydot reg.VecVirtual) {
	v0, v1 := YMM(), YMM()
	VMOVDQU(Mem{Base: src}, v0)
	VMOVDQU(Mem{Base: src, Disp: 32}, v1)
	e0, e1 := YMM(), YMM()
	VPCMPEQB(ylf, v0, e0)
	VPCMPEQB(ylf, v1, e1)
	lf := mask64Y(e0, e1)
	c0, c1 := YMM(), YMM()
	VPCMPEQB(ycr, v0, c0)
	VPCMPEQB(ycr, v1, c1)
	cr := mask64Y(c0, c1)
	var bareCR reg.GPVirtual
	if m != compat {
		n0, n1 := YMM(), YMM()
		VMOVDQU(Mem{Base: src, Disp: 1}, n0)
		VMOVDQU(Mem{Base: src, Disp: 33}, n1)
		VPCMPEQB(ylf, n0, n0) // the next byte is an LF
		VPCMPEQB(ylf, n1, n1)
		VPANDN(c0, n0, n0) // a CR whose next byte is not an LF
		VPANDN(c1, n1, n1)
		bareCR = mask64Y(n0, n1)
	}
	VPCMPEQB(ydot, v0, e0)
	VPCMPEQB(ydot, v1, e1)
	dot := mask64Y(e0, e1)

	bol := GP64()
	LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol) // line starts
	ANDQ(bol, dot)                                  // leading dots
	pcr := GP64()
	LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr) // after a CR
	t := GP64()
	ANDNQ(lf, pcr, t) // an LF not after a CR
	ORQ(t, dot)
	if m == compat {
		ANDQ(cr, pcr) // a CR after a CR
		ORQ(pcr, dot)
	} else {
		ORQ(bareCR, dot)
	}
	JNZ(LabelRef(block32))

	VMOVDQU(v0, Mem{Base: dst})
	VMOVDQU(v1, Mem{Base: dst, Disp: 32})
	ADDQ(U8(64), src)
	ADDQ(U8(64), dst)
	trackDirty(dirty, lf, cr, 7)
	SHRQ(U8(63), lf)
	MOVQ(lf, cbol)
	SHRQ(U8(63), cr)
	MOVQ(cr, ccr)
	JMP(LabelRef(loop))
}

var iotaTab *Mem

// iotaTable is the bytes 0 to 63.
func iotaTable() Mem {
	if iotaTab == nil {
		t := GLOBL("iota64", RODATA|NOPTR)
		for i := 0; i < 64; i += 8 {
			var v uint64
			for b := 0; b < 8; b++ {
				v |= uint64(i+b) << (8 * b)
			}
			DATA(i, U64(v))
		}
		iotaTab = &t
	}
	return *iotaTab
}
