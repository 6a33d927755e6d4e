package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The fast loops of the AVX2 encoder and of the AVX2 Raw decoders, where
// a block with nothing to do but line endings is stored as it is. Once the
// kernel has consumed a block, the byte before src is inside src, so a
// load one byte back gives every byte of a block its predecessor. Then
// whether a 64-byte block has anything to insert, delete or stop at (a
// line-leading dot, an LF not after a CR, ...) is a question about byte
// pairs, answered with compares and logic in vector registers and one
// VPTEST: no mask goes to a general register and no state is carried from
// block to block (under a line limit, only a bound on the line's length:
// see decodeRawFastY). Blocks with
// line-leading dots get them in a side path without leaving the loop; any
// other block leaves it for the 64- and 32-byte paths, which carry the
// state in registers (cbol, ccr, dirty), made by fastExit from the byte
// before src.
//
// The AVX2 Compat and Strict decoders (with a line limit too) have a fast
// loop of their own, decodeCompatFastY, which deletes the CRs of CRLFs by
// overlapping stores. (Deleting them by blends, as decode64Y does,
// measured no faster than decode64Y on mail.)

// srcStart is the memory operand of src's first byte's address.
func srcStart() Mem {
	b, err := Param("src").Base().Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// fastEntry goes to the fast loop p if a byte before src is inside src,
// else to old.
//
// The fast loop is entered only after three blocks in a row with a line
// ending (dirty is 7, see trackDirty): long lines are left to the old
// paths' copy loop (cleanLoopY), and after a block the fast loop could
// not take, the old paths go on for a few blocks (see fastExit), so that
// input that keeps stopping it (many short lines, say) does not pay for
// both.
func fastEntry(src, dirty reg.Register, p, old string) {
	CMPQ(dirty, U8(7))
	JNE(LabelRef(old))
	CMPQ(src, srcStart())
	JNE(LabelRef(p + "_fastin"))
	JMP(LabelRef(old))
}

// fastExit makes the block-to-block state of the 64- and 32-byte paths
// from the byte before src: cbol if it is an LF, ccr if it is a CR. dirty
// is set to d: 6 where the block at src has no LF (the old paths
// copy long lines), 4 where the fast loop could not take it (three blocks
// go through the old paths), 7 at the end.
func fastExit(src, cbol, ccr, dirty reg.Register, d uint32) {
	XORQ(cbol, cbol)
	XORQ(ccr, ccr)
	CMPB(Mem{Base: src, Disp: -1}, U8('\n'))
	SETEQ(cbol.(reg.GPVirtual).As8())
	CMPB(Mem{Base: src, Disp: -1}, U8('\r'))
	SETEQ(ccr.(reg.GPVirtual).As8())
	MOVQ(U32(d), dirty)
}

// fastExits are the fast loop p's ways out: at end, with too little src
// or dst left, to small; at stop, with a block it cannot take, and at
// noLF, with the second block in a row with no LF (last is where the
// first was), to old.
//
// With back, a CR that the loop passed last is given back (src and dst
// move back over it, and lim, if not nil, counts one byte less): its
// successor was not checked (see strictPairs).
//
// noLF, if not nil, runs on the way back into the loop with a first block
// with no LF, and settle, if not nil, first on every way out.
func fastExits(p, old, small string, src, dst, cbol, ccr, dirty, last reg.Register, back bool, lim *lineLimit, noLF, settle func()) {
	giveBack := func() {
		if settle != nil {
			settle()
		}
		if back {
			giveBackCR(p, src, dst, func() { lim.advance(I8(-1)) })
		}
	}
	Label(p + "_fastend")
	giveBack()
	fastExit(src, cbol, ccr, dirty, 7)
	JMP(LabelRef(small))
	Label(p + "_faststop")
	giveBack()
	fastExit(src, cbol, ccr, dirty, 4)
	JMP(LabelRef(old))
	// One block with no LF is taken (a line of mail may well be longer
	// than 64 bytes); a second one in a row leaves.
	Label(p + "_fastnolf")
	t := GP64()
	LEAQ(Mem{Base: src, Disp: -64}, t)
	CMPQ(t, last)
	JEQ(LabelRef(p + "_fastlong"))
	MOVQ(src, last)
	if noLF != nil {
		noLF()
	}
	JMP(LabelRef(p + "_fastgo"))
	Label(p + "_fastlong")
	giveBack()
	fastExit(src, cbol, ccr, dirty, 6)
	JMP(LabelRef(old))
}

// giveBackCR moves src and dst back over a CR before src, if there is one,
// running more on that way.
func giveBackCR(p string, src, dst reg.Register, more func()) {
	kept := uniq(p + "_kept")
	CMPB(Mem{Base: src, Disp: -1}, U8('\r'))
	JNE(LabelRef(kept))
	DECQ(src)
	DECQ(dst)
	more()
	Label(kept)
}

// fastLimits returns the last src and dst at which a fast loop may start
// a block, with nSrc bytes of src and nDst of room in dst left; a loop
// checks them with fastCheck, two compares, where needLeft takes eight
// instructions.
func fastLimits(srcEnd, dstEnd reg.Register, nSrc, nDst int) (srcLim, dstLim reg.GPVirtual) {
	srcLim, dstLim = GP64(), GP64()
	LEAQ(Mem{Base: srcEnd, Disp: -nSrc}, srcLim)
	LEAQ(Mem{Base: dstEnd, Disp: -nDst}, dstLim)
	return srcLim, dstLim
}

// fastCheck goes to end unless a block may start at src and dst.
func fastCheck(src, dst, srcLim, dstLim reg.Register, end string) {
	CMPQ(src, srcLim)
	JGT(LabelRef(end))
	CMPQ(dst, dstLim)
	JGT(LabelRef(end))
}

// eqY returns the bytes of v equal to those of c (0xff, else 0).
func eqY(v, c reg.VecVirtual) reg.VecVirtual {
	e := YMM()
	VPCMPEQB(c, v, e)
	return e
}

// loadPairs loads the 32 bytes at src+disp (v), their predecessors (p)
// and, if succ, successors (n).
func loadPairs(src reg.Register, disp int, succ bool) (v, p, n reg.VecVirtual) {
	v, p = YMM(), YMM()
	VMOVDQU(Mem{Base: src, Disp: disp}, v)
	VMOVDQU(Mem{Base: src, Disp: disp - 1}, p)
	if succ {
		n = YMM()
		VMOVDQU(Mem{Base: src, Disp: disp + 1}, n)
	}
	return v, p, n
}

// strictPairs returns what stops a block of the Strict encoder or the Raw
// decoder: a line-leading dot, and an LF not after a CR or a CR before
// anything but an LF (a CR and the byte after it are a pair as an LF and
// the byte before it: an LF is either where a CR is before it, or wrong);
// and v's LFs. The block's last byte is the first's predecessor in the
// next block: where a fast loop leaves after a CR, it gives the CR back
// (see fastExits).
func strictPairs(v, p, ylf, ycr, ydot reg.VecVirtual) (bad, vLF reg.VecVirtual) {
	bad, t := eqY(v, ydot), YMM()
	VPAND(eqY(p, ylf), bad, bad)
	vLF = eqY(v, ylf)
	VPXOR(vLF, eqY(p, ycr), t)
	VPOR(t, bad, bad)
	return bad, vLF
}

// encodeFastY is the AVX2 encoder's fast loop: blocks with nothing to
// insert and nothing to stop at are stored as they are. It needs 129 bytes
// of src and 129 of room in dst, and goes to small when they are not left,
// to old with a block it cannot take (see fastExits).
func encodeFastY(m int, p, old, small string, src, dst, srcEnd, dstEnd, cbol, ccr, dirty reg.Register, ylf, ycr, ydot reg.VecVirtual) {
	fast, stop, end := p+"_fast", p+"_faststop", p+"_fastend"
	Label(p + "_fastin")
	last := GP64() // see fastExits
	XORQ(last, last)
	var y3 reg.VecVirtual
	if m == compat {
		// (VEX forms only: a legacy-SSE write to an XMM register here,
		// between the loops' YMM work, stalls on Zen 3.)
		t, x := GP32(), XMM()
		MOVL(U32(3), t)
		VMOVD(t, x)
		y3 = YMM()
		VPBROADCASTB(x, y3)
	}
	srcLim, dstLim := fastLimits(srcEnd, dstEnd, 129, 129)
	Label(fast)
	fastCheck(src, dst, srcLim, dstLim, end)
	var v, bad, lf [2]reg.VecVirtual
	for i := range v {
		var pv reg.VecVirtual
		v[i], pv, _ = loadPairs(src, 32*i, false)
		if m != compat {
			bad[i], lf[i] = strictPairs(v[i], pv, ylf, ycr, ydot)
			continue
		}
		lf[i] = eqY(v[i], ylf)
		// A line-leading dot; after a CR a CR, elsewhere an LF: the one
		// byte the predecessor calls for, LF plus 3 (CR) after a CR.
		b, t := eqY(v[i], ydot), YMM()
		VPAND(eqY(pv, ylf), b, b)
		VPAND(y3, eqY(pv, ycr), t)
		VPADDB(ylf, t, t)
		VPCMPEQB(t, v[i], t)
		VPOR(t, b, b)
		bad[i] = b
	}
	fastBlock(p, p+"_dot", src, dst, v, bad, lf, nil)

	// A block whose only stop is one line-leading dot (mail has one
	// every 50 lines or so) gets its dot here, without leaving the loop:
	// the block is stored, the '.' written over the dot, and the block
	// from the dot on stored again one byte higher.
	Label(p + "_dot")
	var dots, other [2]reg.GPVirtual
	for i := range dots {
		v, pv, _ := loadPairs(src, 32*i, false)
		d := eqY(v, ydot)
		VPAND(eqY(pv, ylf), d, d)
		var o reg.VecVirtual
		if m == compat {
			o = YMM()
			VPAND(y3, eqY(pv, ycr), o)
			VPADDB(ylf, o, o)
			VPCMPEQB(o, v, o)
		} else {
			var b reg.VecVirtual
			b, _ = strictPairs(v, pv, ylf, ycr, ydot)
			o = YMM()
			VPANDN(b, d, o) // b &^ d
		}
		dots[i], other[i] = GP64(), GP64()
		VPMOVMSKB(d, dots[i].As32())
		VPMOVMSKB(o, other[i].As32())
	}
	SHLQ(U8(32), dots[1])
	ORQ(dots[1], dots[0])
	ORQ(other[1], other[0])
	JNZ(LabelRef(stop))
	t := GP64()
	BLSRQ(dots[0], t)
	JNZ(LabelRef(stop))
	j := GP64()
	TZCNTQ(dots[0], j)
	w := YMM()
	for i := 0; i < 2; i++ {
		VMOVDQU(Mem{Base: src, Disp: 32 * i}, w)
		VMOVDQU(w, Mem{Base: dst, Disp: 32 * i})
	}
	MOVB(U8('.'), Mem{Base: dst, Index: j, Scale: 1})
	for i := 0; i < 2; i++ {
		VMOVDQU(Mem{Base: src, Index: j, Scale: 1, Disp: 32 * i}, w)
		VMOVDQU(w, Mem{Base: dst, Index: j, Scale: 1, Disp: 32*i + 1})
	}
	ADDQ(U8(64), src)
	ADDQ(U8(65), dst)
	JMP(LabelRef(fast))

	fastExits(p, old, small, src, dst, cbol, ccr, dirty, last, m != compat, nil, nil, nil)
}

// fastBlock ends a block of a fast loop: v's 64 bytes, with their stops
// in bad and their LFs in lf. A block with a stop goes to side and one
// with no LF to the loop's exit; any other is stored as it is, after
// onLF (if set), and the loop goes on.
func fastBlock(p, side string, src, dst reg.Register, v, bad, lf [2]reg.VecVirtual, onLF func()) {
	VPOR(bad[0], bad[1], bad[0])
	any := YMM()
	VPOR(lf[0], lf[1], any)
	VPOR(bad[0], any, any)
	VPTEST(any, bad[0]) // ZF: bad is 0; CF: any &^ bad is 0 (no LF)
	JNZ(LabelRef(side))
	JCS(LabelRef(p + "_fastnolf"))
	if onLF != nil {
		onLF()
	}
	Label(p + "_fastgo")
	VMOVDQU(v[0], Mem{Base: dst})
	VMOVDQU(v[1], Mem{Base: dst, Disp: 32})
	ADDQ(U8(64), src)
	ADDQ(U8(64), dst)
	JMP(LabelRef(p + "_fast"))
}

// decodeRawFastY is the fast loop of the Raw decoders, which keep CRLFs:
// a block with no line-leading dot and no bare CR or LF is stored as it
// is. A block whose only stops are line-leading dots not followed by a CR
// or LF (not an end marker or a look-alike) loses them here, a dot at a
// time: the block is stored, then for each dot, in order, the block's
// bytes after it are stored again over it, one byte lower each time. It
// needs 130 bytes of src and 128 of room in dst.
//
// With a line limit it takes only blocks that cannot break the limit, as
// decode64Y does, but it does not count each line's bytes: a block with an
// LF ends with at most 63 bytes of a line, and only a block with no LF (or
// a side-path block) makes that bound grow. The exact count is made where
// the loop leaves (settleLine).
func decodeRawFastY(p, old, small string, src, dst, srcEnd, dstEnd, cbol, ccr, dirty reg.Register, ylf, ycr, ydot reg.VecVirtual, lim *lineLimit) {
	fast, stop := p+"_fast", p+"_faststop"
	Label(p + "_fastin")
	last := GP64() // see fastExits
	XORQ(last, last)
	srcLim, dstLim := fastLimits(srcEnd, dstEnd, 130, 128)
	var entry, bound reg.GPVirtual // where the loop started; at least r
	if lim != nil {
		entry, bound = GP64(), GP64()
		MOVQ(src, entry)
		MOVQ(lim.load(), bound)
	}
	Label(fast)
	fastCheck(src, dst, srcLim, dstLim, p+"_fastend")
	if lim != nil {
		t := GP64()
		LEAQ(Mem{Base: bound, Disp: 32}, t)
		CMPQ(t, lim.limFast)
		JGT(LabelRef(stop)) // r <= lim-64
	}
	var v, bad, lf [2]reg.VecVirtual
	for i := range v {
		var pv reg.VecVirtual
		v[i], pv, _ = loadPairs(src, 32*i, false)
		bad[i], lf[i] = strictPairs(v[i], pv, ylf, ycr, ydot)
	}
	var onLF func()
	if lim != nil {
		onLF = func() { MOVQ(U32(63), bound) } // the block has an LF
	}
	fastBlock(p, p+"_dots", src, dst, v, bad, lf, onLF)

	Label(p + "_dots")
	var dots, other, lfs [2]reg.GPVirtual
	for i := range dots {
		v, pv, nv := loadPairs(src, 32*i, true)
		b, vLF := strictPairs(v, pv, ylf, ycr, ydot)
		d := eqY(v, ydot)
		VPAND(eqY(pv, ylf), d, d)
		o := YMM()
		VPANDN(b, d, o) // b &^ d: a bare CR or LF
		t := YMM()
		VPOR(eqY(nv, ylf), eqY(nv, ycr), t)
		VPAND(d, t, t) // a leading dot before a CR or LF
		VPOR(t, o, o)
		dots[i], other[i] = GP64(), GP64()
		VPMOVMSKB(d, dots[i].As32())
		VPMOVMSKB(o, other[i].As32())
		if lim != nil {
			lfs[i] = GP64()
			VPMOVMSKB(vLF, lfs[i].As32())
		}
	}
	ORQ(other[1], other[0])
	JNZ(LabelRef(stop))
	SHLQ(U8(32), dots[1])
	ORQ(dots[1], dots[0])
	d := dots[0]
	n := GP64()
	POPCNTQ(d, n)
	CMPQ(n, U8(4))
	JA(LabelRef(stop))
	w := YMM()
	for i := 0; i < 2; i++ {
		VMOVDQU(Mem{Base: src, Disp: 32 * i}, w)
		VMOVDQU(w, Mem{Base: dst, Disp: 32 * i})
	}
	// e+j is where the bytes after the dot at j go.
	e, j := GP64(), GP64()
	MOVQ(dst, e)
	Label(p + "_dot")
	TZCNTQ(d, j)
	BLSRQ(d, d)
	for i := 0; i < 2; i++ {
		VMOVDQU(Mem{Base: src, Index: j, Scale: 1, Disp: 32*i + 1}, w)
		VMOVDQU(w, Mem{Base: e, Index: j, Scale: 1, Disp: 32 * i})
	}
	DECQ(e)
	TESTQ(d, d)
	JNZ(LabelRef(p + "_dot"))
	LEAQ(Mem{Base: e, Disp: 64}, dst)
	ADDQ(U8(64), src)
	if lim != nil {
		// bound becomes the bytes after the block's last LF, or grows by
		// 64 if it has none.
		SHLQ(U8(32), lfs[1])
		ORQ(lfs[1], lfs[0])
		x, m := GP64(), GP64()
		LZCNTQ(lfs[0], x) // CF: no LF
		SBBQ(m, m)
		ANDQ(m, bound)
		ADDQ(x, bound)
	}
	JMP(LabelRef(fast))

	var noLF, settle func()
	if lim != nil {
		noLF = func() { ADDQ(U8(64), bound) }
		settle = func() { settleLine(p, src, entry, lim) }
	}
	fastExits(p, old, small, src, dst, cbol, ccr, dirty, last, true, lim, noLF, settle)
}

// settleLine makes lim's r the exact count at src: the bytes since the
// last LF before src, searched back to where the fast loop started
// (entry); with none there, r as it was there, which the loop leaves
// alone, plus the bytes since. (Leaving the loop is rare; the search
// goes back at most a line.)
func settleLine(p string, src, entry reg.Register, lim *lineLimit) {
	loop, none, done := uniq(p+"_back"), uniq(p+"_since"), uniq(p+"_settled")
	q, t := GP64(), GP64()
	MOVQ(src, q)
	Label(loop)
	CMPQ(q, entry)
	JEQ(LabelRef(none))
	DECQ(q)
	CMPB(Mem{Base: q}, U8('\n'))
	JNE(LabelRef(loop))
	MOVQ(src, t)
	SUBQ(q, t)
	DECQ(t)
	lim.set(t)
	JMP(LabelRef(done))
	Label(none)
	MOVQ(src, t)
	SUBQ(entry, t)
	lim.advance(t)
	Label(done)
}

// decodeCompatFastY is the fast loop of the AVX2 Compat and Strict
// decoders (the two decode such blocks alike): a block
// whose CRs are exactly the bytes before its LFs (so no bare CR or LF, and
// no LF that starts a line) loses its CRs. Each
// 32-byte half is stored at its place in dst, then its bytes after its CR
// one byte lower, over the CR: the second store is made whether the half
// has a CR or not (without one it lands past the half's output, where the
// next half or block goes), so that the usual block, with a line ending
// in a half or two, takes no branch on where lines end. A half with more
// than one CR, or a block with line-leading dots that are not an end
// marker (a dot before a CR or LF), has them deleted one at a time, the
// bytes after each stored again one byte lower than after the one before;
// more than four in a block (short lines), by table.
// Each CR is checked against the byte after it, even the block's last, so
// no CR is given back on the way out, and an LF at the block's start
// against the byte before it, which the loop has already checked but not
// at its entry. It needs 130 bytes of src and 128 of room in dst. Under a
// line limit (lim) it keeps no count: see the entry.
func decodeCompatFastY(p, old, small string, src, dst, srcEnd, dstEnd, cbol, ccr, dirty reg.Register, ylf, ycr, ydot reg.VecVirtual, lim *lineLimit) {
	fast, stop := p+"_fast", p+"_faststop"
	Label(p + "_fastin")
	{
		// An LF at src if and only if a CR is before it.
		t, u := GP64(), GP64()
		XORQ(t, t)
		XORQ(u, u)
		CMPB(Mem{Base: src, Disp: -1}, U8('\r'))
		SETEQ(t.As8())
		CMPB(Mem{Base: src}, U8('\n'))
		SETEQ(u.As8())
		CMPQ(t, u)
		JNE(LabelRef(old))
	}
	var entry reg.GPVirtual // where the loop started (see settleLine)
	if lim != nil {
		// The loop keeps no count of its own: it is entered only where no
		// line in it can pass the limit, and r is made exact on the way
		// out. It takes at most one block in a row with no line ending
		// through fastExits, and one more through the side path (a block
		// whose only line start is a dot at its first byte), so the line
		// at the entry grows by at most 191 bytes before its CR, and a
		// line that starts in the loop has at most 191 (the dot, 63 bytes
		// of that block, a block, 63).
		t, u := lim.load(), GP64()
		LEAQ(Mem{Base: t, Disp: 192}, u)
		CMPQ(u, lim.limFast) // r+191 <= lim (so 191 <= lim), with room to spare
		JGT(LabelRef(old))
		entry = GP64()
		MOVQ(src, entry)
	}
	last := GP64() // see fastExits
	XORQ(last, last)
	// One bound: src advances by 64 a block and dst by at most that.
	bound, t := GP64(), GP64()
	srcLim, dstLim := fastLimits(srcEnd, dstEnd, 130, 128)
	MOVQ(srcLim, bound)
	SUBQ(src, bound)
	MOVQ(dstLim, t)
	SUBQ(dst, t)
	CMPQ(t, bound)
	CMOVQLT(t, bound)
	ADDQ(src, bound)

	// checks loads half i of the block (v) and the bytes after its bytes
	// (nv), and returns its CRs (cr), its stops but leading dots (pair: a
	// CR whose next byte is not an LF, or an LF at the next byte without a
	// CR here) and its leading dots (d).
	checks := func(i int) (v, nv, cr, pair, d reg.VecVirtual) {
		var pv reg.VecVirtual
		v, pv, nv = loadPairs(src, 32*i, true)
		cr = eqY(v, ycr)
		pair = YMM()
		VPXOR(cr, eqY(nv, ylf), pair)
		d = eqY(v, ydot)
		VPAND(eqY(pv, ylf), d, d)
		return v, nv, cr, pair, d
	}
	Label(fast)
	CMPQ(src, bound)
	JGT(LabelRef(p + "_fastend"))
	var v, cr, bad [2]reg.VecVirtual
	for i := range v {
		var pair, d reg.VecVirtual
		v[i], _, cr[i], pair, d = checks(i)
		bad[i] = YMM()
		VPOR(pair, d, bad[i])
	}
	VPOR(bad[0], bad[1], bad[0])
	VPTEST(bad[0], bad[0])
	JNZ(LabelRef(p + "_side"))
	var m [2]reg.GPVirtual
	for h := range m {
		m[h] = GP64()
		VPMOVMSKB(cr[h], m[h].As32())
	}
	// No CR, so no LF (but maybe at the block's first byte).
	any := GP64()
	MOVL(m[0].As32(), any.As32())
	ORL(m[1].As32(), any.As32())
	JZ(LabelRef(p + "_fastnolf"))
	Label(p + "_fastgo")
	// Each half is stored at its place in dst, then the half's bytes
	// after its CR, if it has one, one byte lower (a half with none
	// stores them past its 32 bytes, where the next half or block goes).
	w := YMM()
	shift := func(e, j reg.Register, disp, k int) {
		VMOVDQU(Mem{Base: src, Index: j, Scale: 1, Disp: disp + 1}, w)
		VMOVDQU(w, Mem{Base: e, Index: j, Scale: 1, Disp: -k})
	}
	j, rest, n := GP64(), GP64(), GP64()
	o := dst // where the half goes
	for h := range m {
		VMOVDQU(v[h], Mem{Base: o})
		TZCNTL(m[h].As32(), j.As32()) // 32 with no CR
		shift(o, j, 32*h, 0)
		BLSRL(m[h].As32(), rest.As32())
		JNZ(LabelRef(p + "_more"))
		POPCNTL(m[h].As32(), n.As32())
		next := GP64()
		LEAQ(Mem{Base: o, Disp: 32}, next)
		SUBQ(n, next)
		o = next
	}
	MOVQ(o, dst)
	ADDQ(U8(64), src)
	JMP(LabelRef(fast))

	// A half with more than one CR: all the block's CRs, one at a time,
	// up to four; more (short lines) by table.
	Label(p + "_more")
	crs := GP64()
	MOVQ(m[1], crs)
	SHLQ(U8(32), crs)
	ORQ(m[0], crs)
	MOVQ(crs, rest)
	POPCNTQ(crs, n)
	CMPQ(n, U8(4))
	JA(LabelRef(p + "_fasttable"))
	JMP(LabelRef(p + "_delete")) // (the bytes before the first CR are stored)

	// A block with a stop: on if its only stops are leading dots not
	// before a CR or LF, deleted with its CRs.
	Label(p + "_side")
	var dots, crm, other [2]reg.GPVirtual
	for i := range dots {
		_, nv, cr, pair, d := checks(i)
		// A leading dot before a CR or LF: its next byte is one.
		t := YMM()
		VPOR(eqY(nv, ylf), eqY(nv, ycr), t)
		VPAND(d, t, t)
		VPOR(t, pair, pair)
		dots[i], crm[i], other[i] = GP64(), GP64(), GP64()
		VPMOVMSKB(d, dots[i].As32())
		VPMOVMSKB(cr, crm[i].As32())
		VPMOVMSKB(pair, other[i].As32())
	}
	ORQ(other[1], other[0])
	JNZ(LabelRef(stop))
	SHLQ(U8(32), dots[1])
	ORQ(dots[1], dots[0])
	SHLQ(U8(32), crm[1])
	ORQ(crm[1], crm[0])
	ORQ(dots[0], crm[0])
	MOVQ(crm[0], rest)
	POPCNTQ(rest, n)
	CMPQ(n, U8(4))
	JA(LabelRef(p + "_fasttable"))
	for i := 0; i < 2; i++ {
		VMOVDQU(Mem{Base: src, Disp: 32 * i}, w)
		VMOVDQU(w, Mem{Base: dst, Disp: 32 * i})
	}

	// The deletions in rest, in order, from the block stored at dst.
	Label(p + "_delete")
	e := GP64() // e+j is where the bytes after a deletion at j go
	MOVQ(dst, e)
	Label(p + "_del1")
	TZCNTQ(rest, j)
	BLSRQ(rest, rest)
	shift(e, j, 0, 0)
	shift(e, j, 32, -32)
	DECQ(e)
	TESTQ(rest, rest)
	JNZ(LabelRef(p + "_del1"))
	LEAQ(Mem{Base: e, Disp: 64}, dst)
	ADDQ(U8(64), src)
	JMP(LabelRef(fast))

	// The deletions in rest, more than four: each 8-byte group of the
	// block is packed by table (see compactLane).
	Label(p + "_fasttable")
	compact64(src, dst, rest)
	ADDQ(U8(64), src)
	JMP(LabelRef(fast))

	var settle func()
	if lim != nil {
		settle = func() { settleLine(p, src, entry, lim) }
	}
	fastExits(p, old, small, src, dst, cbol, ccr, dirty, last, false, lim, nil, settle)
}

// compact64 stores the 64 bytes at src at dst without those whose bits are
// set in del, and moves dst past them.
func compact64(src, dst, del reg.Register) {
	ptab := GP64()
	LEAQ(compactTable(), ptab)
	var off reg.GPVirtual // where the next group goes, from dst (nil: 0)
	// group returns group g's mask, and the offset after it from o.
	group := func(g int, o reg.GPVirtual) (m, next reg.GPVirtual) {
		m = GP64()
		MOVQ(del, m)
		if g > 0 {
			SHRQ(U8(8*g), m)
		}
		MOVBQZX(m.As8(), m)
		c := GP64()
		POPCNTQ(m, c)
		next = GP64()
		if o == nil {
			MOVQ(U32(8), next)
		} else {
			LEAQ(Mem{Base: o, Disp: 8}, next)
		}
		SUBQ(c, next)
		return m, next
	}
	for l := 0; l < 4; l++ {
		x := XMM()
		VMOVDQU(Mem{Base: src, Disp: 16 * l}, x)
		mlo, hi := group(2*l, off)
		mhi, next := group(2*l+1, hi)
		compactLane(x, mlo, mhi, dst, off, hi, ptab)
		off = next
	}
	ADDQ(off, dst)
}
