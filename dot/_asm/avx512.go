package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// broadcastZ returns a ZMM register holding c in every byte.
func broadcastZ(c byte) reg.VecVirtual {
	t := GP32()
	MOVL(U32(c), t)
	z := ZMM()
	VPBROADCASTB(t, z)
	return z
}

// cmpMaskZ returns a general register with bit i set where byte i of v
// equals byte i of c.
func cmpMaskZ(v, c reg.VecVirtual) reg.GPVirtual {
	k := K()
	VPCMPEQB(c, v, k)
	m := GP64()
	KMOVQ(k, m)
	return m
}

// decodeAVX512 generates the AVX-512 decoder. Per 64-byte block it builds
// bit masks of LF, CR and '.' and of LF and CR one byte ahead (a second,
// overlapping load), derives the bytes to delete and the first position it
// must not pass, compacts the kept bytes with VPCOMPRESSB and stores them
// (see storeLowZ). A fast loop takes whole blocks that have a byte after
// them, room for all their output and nothing to stop at; everything else
// goes through the general path, which masks its loads past the end of
// src (see loadMaskedZ), so no byte outside src and dst is touched.
// decodeAVX512 generates the AVX-512 decoder, or with limited its twin
// that keeps a line limit.
func decodeAVX512(limited bool) {
	name, sig, pre, doc := "decodeAVX512", signature, "dec512", "decodeAVX512 decodes with AVX-512 VBMI2 (see the package's kernel notes)."
	if limited {
		name, sig, pre, doc = "decodeLinesAVX512", decSignature, "dec512l", "decodeLinesAVX512 is decodeAVX512 with a line limit."
	}
	done := pre + "_done"
	a := begin(name, doc, sig, false)
	dst, dstLim, src, srcLim, flags := a.dst, a.dstN, a.src, a.srcN, a.flags
	limits512(a, done)
	// ccr is used in Strict and Raw mode; for dirty see decodeBody512.
	cbol, ccr, dirty := lineState(flags, 3)
	// all ones, in a register (for the twin, which needs one more, a new
	// one at each use).
	var allOnes reg.GPVirtual
	ones := func() reg.GPVirtual {
		if allOnes == nil || limited {
			allOnes = GP64()
			MOVQ(I32(-1), allOnes)
		}
		return allOnes
	}
	if !limited {
		ones()
	}
	zlf, zcr, zdot := broadcastZ('\n'), broadcastZ('\r'), broadcastZ('.')
	var lim *lineLimit
	if limited {
		lim = newLineLimit(false)
	}

	modes := []int{compat, strict, raw}
	labels := dispatchMode(pre, flags, modes)
	for i, m := range modes {
		Label(labels[i])
		p := labels[i]
		fast := p + "_fast"
		general := p + "_general"
		if lim != nil {
			lim.check(general) // (see lineLimit)
		}

		// The fast loop.
		Label(fast)
		CMPQ(src, srcLim)
		JGT(LabelRef(general))
		CMPQ(dst, dstLim)
		JGT(LabelRef(general))
		{
			v, vn := ZMM(), ZMM()
			klf, kcr := K(), K()
			decodeBody512(m, p, src, dst, srcLim, dstLim, cbol, ccr, dirty, v, klf, kcr, zlf, zcr, zdot, general, lim)
			VMOVDQU64(Mem{Base: src, Disp: 1}, vn)
			mk := decodeMasksK(m, v, vn, klf, kcr, zlf, zcr, zdot, cbol, ccr)
			TESTQ(mk.bail, mk.bail)
			JNZ(LabelRef(general))
			keep := mk.del
			NOTQ(keep)
			cnt := GP64()
			POPCNTQ(keep, cnt)
			// dst has room for 64 bytes: store them all (past the kept
			// ones, dst is scratch space until overwritten).
			kk := K()
			KMOVQ(keep, kk)
			out := ZMM()
			VPCOMPRESSB_Z(v, kk, out)
			VMOVDQU64(out, Mem{Base: dst})
			ADDQ(cnt, dst)
			// After a block without CR or LF, before a byte that is no
			// LF (so the next block has no line start), the next block
			// can enter the long-line loop.
			TESTQ(mk.lf, mk.lf)
			JNZ(LabelRef(p + "_dirty"))
			TESTQ(mk.cr, mk.cr)
			JNZ(LabelRef(p + "_dirty"))
			CMPB(Mem{Base: src, Disp: 64}, U8('\n'))
			JEQ(LabelRef(p + "_dirty"))
			MOVQ(U32(1), dirty)
			Label(p + "_dirty")
			ADDQ(U8(64), src)
			MOVQ(mk.lf, cbol)
			SHRQ(U8(63), cbol)
			if m != compat {
				MOVQ(mk.cr, ccr)
				SHRQ(U8(63), ccr)
			}
			if lim != nil {
				lim.next(mk.lf, 64, fast, general)
			} else {
				JMP(LabelRef(fast))
			}

			state := []reg.Register{cbol, ccr}
			if m == compat {
				state = state[:1] // ccr is not used
			}
			cleanLoopZ(p, src, dst, srcLim, dstLim, dirty, v, klf, kcr, zlf, zcr, general, p+"_masks", lim, state...)
		}

		// The general path: one block, of any length, with any room.
		Label(general)
		// The block is src[:min(rem, 64)]; its look-ahead is one byte
		// further, when there is one.
		_, room, r := generalHead512(src, dst, srcLim, dstLim, done)
		lm := GP64() // bytes of the block that exist
		BZHIQ(r, ones(), lm)
		DECQ(r)
		lm1 := GP64() // bytes of the look-ahead block that exist
		BZHIQ(r, ones(), lm1)
		v, vn := ZMM(), ZMM()
		loadMaskedZ(src, 0, lm, v)
		loadMaskedZ(src, 1, lm1, vn)
		mk := decodeMasks(m, v, vn, zlf, zcr, zdot, cbol, ccr)
		bail, cr := mk.bail, mk.cr

		// Also stop at the end of src, and before its last byte if that is
		// a CR or a line-leading dot, whose meaning depends on the byte
		// after it.
		XORQ(lm, lm1)
		t2 := GP64()
		MOVQ(cr, t2)
		ORQ(mk.dotB, t2)
		ANDQ(t2, lm1)
		ORQ(lm1, bail)
		ANDNQ(ones(), lm, t2)
		ORQ(t2, bail)
		if lim != nil {
			// Line endings: CRLFs (in Strict and Raw mode every CR of a
			// block that is not stopped at) and LFs.
			term := GP64()
			MOVQ(cr, term)
			if m == compat {
				ANDQ(mk.nlf, term)
			}
			ORQ(mk.lf, term)
			lim.bail(term, bail)
		}
		cut := GP64()
		TZCNTQ(bail, cut) // 64 if nothing stops us

		keep := mk.del
		NOTQ(keep)
		BZHIQ(cut, keep, keep)
		cnt := GP64()
		POPCNTQ(keep, cnt)
		CMPQ(cnt, room)
		JAE(LabelRef(p + "_room"))

		storeCompressed(v, keep, cnt, dst, room)
		ADDQ(cnt, dst)
		CMPQ(cut, U8(64))
		JNE(LabelRef(p + "_partial"))
		ADDQ(U8(64), src)
		MOVQ(U32(3), dirty)
		MOVQ(mk.lf, cbol)
		SHRQ(U8(63), cbol)
		if m != compat {
			MOVQ(cr, ccr)
			SHRQ(U8(63), ccr)
		}
		if lim != nil {
			lim.next(mk.lf, 64, fast, general)
		} else {
			JMP(LabelRef(fast))
		}

		Label(p + "_partial")
		ADDQ(cut, src)
		if lim != nil {
			lim.consume(mk.lf, cut)
		}
		JMP(LabelRef(done))

		// The kept bytes fill dst: stop right after the last one that
		// fits, as the generic kernel does.
		Label(p + "_room")
		b := GP64()
		MOVQ(room, b)
		DECQ(b)
		one := GP64()
		MOVQ(U32(1), one)
		SHLXQ(b, one, one)
		PDEPQ(keep, one, one)
		TZCNTQ(one, cut)
		if m == raw {
			// Not the CR of a CRLF without its LF, which the generic
			// kernel writes only with the LF.
			BTQ(cut, cr)
			SETCS(b.As8())
			MOVBQZX(b.As8(), b)
			SUBQ(b, room)
			SUBQ(b, cut)
		}
		INCQ(cut)
		BZHIQ(cut, keep, keep)
		storeCompressed(v, keep, room, dst, room)
		ADDQ(room, dst)
		ADDQ(cut, src)
		if lim != nil {
			lim.consume(mk.lf, cut)
		}
		JMP(LabelRef(done))
	}

	Label(done)
	lim.finish()
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}

// limits512 goes to done if src or dst is empty, and turns a.srcN and
// a.dstN into the limits of the fast loops, which run while 65 bytes of src
// and of dst are left: while src <= srcLim and dst <= dstLim.
func limits512(a args, done string) {
	TESTQ(a.srcN, a.srcN)
	JZ(LabelRef(done))
	TESTQ(a.dstN, a.dstN)
	JZ(LabelRef(done))
	LEAQ(Mem{Base: a.src, Index: a.srcN, Scale: 1, Disp: -65}, a.srcN)
	LEAQ(Mem{Base: a.dst, Index: a.dstN, Scale: 1, Disp: -65}, a.dstN)
}

// generalHead512 starts a general path: rem is what is left of src and
// room of dst (it goes to done if either is 0), and r is min(rem, 65).
func generalHead512(src, dst, srcLim, dstLim reg.Register, done string) (rem, room, r reg.GPVirtual) {
	rem, room = GP64(), GP64()
	LEAQ(Mem{Base: srcLim, Disp: 65}, rem)
	SUBQ(src, rem)
	JZ(LabelRef(done))
	LEAQ(Mem{Base: dstLim, Disp: 65}, room)
	SUBQ(dst, room)
	JZ(LabelRef(done))
	r = GP64()
	MOVQ(U32(65), r)
	CMPQ(rem, r)
	CMOVQLT(rem, r)
	return rem, room, r
}

// loopLimit sets lim to min(srcLim-src, dstLim-dst): how far an index into
// both src and dst may go while the fast loops' limits hold.
func loopLimit(src, dst, srcLim, dstLim, lim reg.Register) {
	MOVQ(srcLim, lim)
	SUBQ(src, lim)
	t := GP64()
	MOVQ(dstLim, t)
	SUBQ(dst, t)
	CMPQ(t, lim)
	CMOVQLT(t, lim)
}

// decodeMaskSet holds the masks of one block.
type decodeMaskSet struct {
	lf, cr, dotB reg.GPVirtual
	nlf          reg.GPVirtual // the next byte is an LF
	bail         reg.GPVirtual // positions to stop in front of (not counting the end of src)
	del          reg.GPVirtual // bytes to delete
}

// decodeMasks compares the block v and the look-ahead block vn (v shifted
// by one byte) with LF, CR and '.' and derives the masks.
func decodeMasks(m int, v, vn, zlf, zcr, zdot reg.VecVirtual, cbol, ccr reg.Register) decodeMaskSet {
	klf, kcr := K(), K()
	VPCMPEQB(zlf, v, klf)
	VPCMPEQB(zcr, v, kcr)
	return decodeMasksK(m, v, vn, klf, kcr, zlf, zcr, zdot, cbol, ccr)
}

// decodeMasksK is decodeMasks with the LF and CR compares of v done.
func decodeMasksK(m int, v, vn reg.VecVirtual, klf, kcr reg.Register, zlf, zcr, zdot reg.VecVirtual, cbol, ccr reg.Register) decodeMaskSet {
	lf, cr := GP64(), GP64()
	KMOVQ(klf, lf)
	KMOVQ(kcr, cr)
	dot := cmpMaskZ(v, zdot)
	nlf := cmpMaskZ(vn, zlf) // next byte is LF
	ncr := cmpMaskZ(vn, zcr) // next byte is CR

	bol := GP64() // starts a line: after an LF
	LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol)
	dotB := GP64() // a dot starting a line
	MOVQ(dot, dotB)
	ANDQ(bol, dotB)

	// Stop before: a line-leading dot followed by CR or LF (an end marker
	// or a quirk);
	bail := GP64()
	ORQ(nlf, ncr)
	MOVQ(ncr, bail)
	ANDQ(dotB, bail)
	if m == compat {
		// an LF at the start of a line (net/textproto's alternation).
		ANDQ(lf, bol)
		ORQ(bol, bail)
	} else {
		// a bare LF; a bare CR.
		pcr := GP64()
		LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr)
		t := GP64()
		ANDNQ(lf, pcr, t)
		ORQ(t, bail)
		ANDNQ(cr, nlf, t)
		ORQ(t, bail)
	}

	// Delete the CR of each CRLF (not in Raw mode) and stuffed dots.
	del := GP64()
	switch m {
	case compat:
		MOVQ(cr, del)
		ANDQ(nlf, del)
		ORQ(dotB, del)
	case strict:
		MOVQ(cr, del) // every CR before a stop precedes an LF
		ORQ(dotB, del)
	case raw:
		MOVQ(dotB, del)
	}
	return decodeMaskSet{lf: lf, cr: cr, dotB: dotB, nlf: nlf, bail: bail, del: del}
}

// storeCompressed stores the bytes of v selected by keep (cnt of them)
// contiguously at dst (see storeLowZ).
func storeCompressed(v reg.VecVirtual, keep, cnt, dst, room reg.Register) {
	k := K()
	KMOVQ(keep, k)
	out := ZMM()
	VPCOMPRESSB_Z(v, k, out)
	storeLowZ(out, cnt, dst, room)
}

// encodeAVX512 generates the AVX-512 encoder. A 64-byte block that needs
// no insertion is stored as it is. Otherwise each 32-byte half is spread
// over up to 64 output bytes with VPEXPANDB: the output positions of the
// input bytes come from the insertion mask by PDEP/PEXT, and the inserted
// slots are filled with '.' (before a line-leading dot) or CR (before a
// bare LF, Compat only).
func encodeAVX512() {
	a := begin("encodeAVX512", "encodeAVX512 encodes with AVX-512 VBMI2 (see the package's kernel notes).", signature, false)
	dst, dstLim, src, srcLim, flags := a.dst, a.dstN, a.src, a.srcN, a.flags
	limits512(a, "enc512_done")
	cbol, ccr, dirty := lineState(flags, 3) // dirty: see encodeBody512
	zlf, zcr, zdot := broadcastZ('\n'), broadcastZ('\r'), broadcastZ('.')

	// Raw encodes as Strict.
	SHRQ(U8(1), flags)
	TESTQ(flags, flags)
	JNZ(LabelRef("enc512_strict"))
	JMP(LabelRef("enc512_compat"))

	for _, m := range []int{compat, strict} {
		p := "enc512_" + modeName[m]
		Label(p)

		fast := p + "_fast"
		general := p + "_block"
		// The fast loop: whole blocks with a byte after them, room for
		// them and nothing to insert or stop at are copied.
		Label(fast)
		CMPQ(src, srcLim)
		JGT(LabelRef(general))
		CMPQ(dst, dstLim)
		JGT(LabelRef(general))
		{
			v := ZMM()
			klf, kcr := K(), K()
			encodeBody512(m, p, src, dst, srcLim, dstLim, cbol, ccr, dirty, v, klf, kcr, zlf, zcr, zdot, general)
			var nlf reg.GPVirtual
			if m == strict {
				vn := ZMM()
				VMOVDQU64(Mem{Base: src, Disp: 1}, vn)
				nlf = cmpMaskZ(vn, zlf)
			}
			lf, cr := GP64(), GP64()
			KMOVQ(klf, lf)
			KMOVQ(kcr, cr)
			dot := cmpMaskZ(v, zdot)
			bol := GP64()
			LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol)
			pcr := GP64()
			LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr)
			stop := GP64() // insertions and stops
			MOVQ(dot, stop)
			ANDQ(bol, stop)
			t := GP64()
			ANDNQ(lf, pcr, t) // Compat: bare LFs get a CR; Strict: they stop
			ORQ(t, stop)
			if m == compat {
				MOVQ(cr, t)
				ANDQ(pcr, t)
			} else {
				ANDNQ(cr, nlf, t)
			}
			ORQ(t, stop)
			TESTQ(stop, stop)
			JNZ(LabelRef(general))
			VMOVDQU64(v, Mem{Base: dst})
			ADDQ(U8(64), dst)
			ADDQ(U8(64), src)
			// After a block without LF (so the next block has no line
			// start), the next block can enter the long-line loop.
			TESTQ(lf, lf)
			JNZ(LabelRef(p + "_dirty"))
			MOVQ(U32(1), dirty)
			Label(p + "_dirty")
			SHRQ(U8(63), lf)
			MOVQ(lf, cbol)
			SHRQ(U8(63), cr)
			MOVQ(cr, ccr)
			JMP(LabelRef(fast))

			cleanLoopZ(p, src, dst, srcLim, dstLim, dirty, v, klf, kcr, zlf, zcr, general, p+"_cleanexit", nil, cbol, ccr)
		}

		// The general path: one block, of any length, with any room.
		Label(general)
		rem, room, r := generalHead512(src, dst, srcLim, dstLim, "enc512_done")
		lm := GP64()
		MOVQ(I32(-1), lm)
		BZHIQ(r, lm, lm)
		v := ZMM()
		loadMaskedZ(src, 0, lm, v)
		var nlf reg.GPVirtual
		if m == strict {
			DECQ(r)
			lm1 := GP64()
			MOVQ(I32(-1), lm1)
			BZHIQ(r, lm1, lm1)
			vn := ZMM()
			loadMaskedZ(src, 1, lm1, vn)
			nlf = cmpMaskZ(vn, zlf)
		}
		lf := cmpMaskZ(v, zlf)
		cr := cmpMaskZ(v, zcr)
		dot := cmpMaskZ(v, zdot)

		bol := GP64()
		LEAQ(Mem{Base: cbol, Index: lf, Scale: 2}, bol)
		pcr := GP64()
		LEAQ(Mem{Base: ccr, Index: cr, Scale: 2}, pcr)
		ins := GP64() // insert a byte before these
		MOVQ(dot, ins)
		ANDQ(bol, ins)
		bail := GP64()
		t := GP64()
		if m == compat {
			// A bare LF gets a CR. A CR right after a CR is written as it
			// is (net/textproto's toggle): stop there.
			ANDNQ(lf, pcr, t)
			ORQ(t, ins)
			MOVQ(cr, bail)
			ANDQ(pcr, bail)
		} else {
			// A bare LF, or a CR not followed by LF (or by the end of
			// src), is an error: stop there.
			ANDNQ(lf, pcr, bail)
			ANDNQ(cr, nlf, t)
			ORQ(t, bail)
		}
		MOVQ(lm, t)
		NOTQ(t)
		ORQ(t, bail)
		cut := GP64()
		TZCNTQ(bail, cut)
		BZHIQ(cut, ins, ins)

		// A whole block with nothing to insert is a copy.
		TESTQ(ins, ins)
		JNZ(LabelRef(p + "_slow"))
		CMPQ(cut, U8(64))
		JNE(LabelRef(p + "_slow"))
		CMPQ(room, U8(64))
		JBE(LabelRef(p + "_slow")) // room for the LF of a last CR, too
		VMOVDQU64(v, Mem{Base: dst})
		ADDQ(U8(64), dst)
		SUBQ(U8(64), room)
		ADDQ(U8(64), src)
		SUBQ(U8(64), rem)
		Label(p + "_next")
		MOVQ(U32(3), dirty)
		SHRQ(U8(63), lf)
		MOVQ(lf, cbol)
		SHRQ(U8(63), cr)
		MOVQ(cr, ccr)
		JMP(LabelRef(fast))

		Label(p + "_slow")
		h := GP64()
		MOVL(ins.As32(), h.As32())
		c := GP64()
		MOVQ(U32(32), c)
		CMPQ(cut, c)
		CMOVQLT(cut, c)
		crh := GP64()
		MOVL(cr.As32(), crh.As32())
		encodeHalf(m, p+"_lo", v, h, lf, crh, c, dst, room, src, rem, zcr, zdot)
		v1 := ZMM()
		VEXTRACTI64X4(U8(1), v, v1.AsY())
		MOVQ(ins, h)
		SHRQ(U8(32), h)
		lfh := GP64()
		MOVQ(lf, lfh)
		SHRQ(U8(32), lfh)
		MOVQ(cut, c)
		SUBQ(U8(32), c)
		MOVQ(cr, crh)
		SHRQ(U8(32), crh)
		encodeHalf(m, p+"_hi", v1, h, lfh, crh, c, dst, room, src, rem, zcr, zdot)
		JMP(LabelRef(p + "_next"))
	}

	Label("enc512_done")
	VZEROUPPER()
	returnCounts(dst, src)
	RET()
}

// encodeHalf encodes the first cut (0..32) bytes of s, whose insertion
// mask is h and LF and CR masks lf and cr (32 bits), at dst. It falls through if it encoded all 32
// bytes and jumps to the end otherwise.
func encodeHalf(m int, p string, s reg.VecVirtual, h, lf, cr, cut, dst, room, src, rem reg.Register, zcr, zdot reg.VecVirtual) {
	TESTQ(cut, cut)
	JZ(LabelRef("enc512_done"))
	// Output slots: two per input byte that gets an insertion, one per
	// other byte. M marks the slots that hold input bytes.
	c55, cAA := GP64(), GP64()
	MOVQ(U64(0x5555555555555555), c55)
	MOVQ(U64(0xAAAAAAAAAAAAAAAA), cAA)
	pm := GP64()
	PDEPQ(c55, h, pm)
	ORQ(cAA, pm)
	mm := GP64()
	PEXTQ(pm, cAA, mm)
	n := GP64() // output length
	POPCNTQ(h, n)
	ADDQ(cut, n)
	CMPQ(n, room)
	if m == strict {
		JAE(LabelRef(p + "_room")) // a last CR needs room for its LF
	} else {
		JA(LabelRef(p + "_room"))
	}
	expandStore(m, s, h, lf, mm, n, dst, room, zcr, zdot)
	ADDQ(n, dst)
	SUBQ(n, room)
	CMPQ(cut, U8(32))
	JNE(LabelRef(p + "_partial"))
	ADDQ(U8(32), src) // a constant advance keeps the loads off the masks' chain
	SUBQ(U8(32), rem)
	JMP(LabelRef(p + "_ok"))
	Label(p + "_partial")
	ADDQ(cut, src)
	JMP(LabelRef("enc512_done"))

	// Only the input bytes whose output fits completely are encoded.
	Label(p + "_room")
	t := GP64()
	BZHIQ(room, mm, t) // room <= n <= 64
	POPCNTQ(t, cut)
	if m == strict {
		// Not a CR without its LF: the generic kernel holds a CR back
		// and writes it with the LF.
		MOVQ(cut, t)
		DECQ(t) // -1 if nothing fits: bit 63 of cr, which is clear
		BTQ(t, cr)
		SETCS(t.As8())
		MOVBQZX(t.As8(), t)
		SUBQ(t, cut)
	}
	BZHIQ(cut, h, h)
	POPCNTQ(h, n)
	ADDQ(cut, n)
	expandStore(m, s, h, lf, mm, n, dst, room, zcr, zdot)
	ADDQ(n, dst)
	ADDQ(cut, src)
	JMP(LabelRef("enc512_done"))
	Label(p + "_ok")
}

// expandStore spreads the bytes of s over the slots mm, fills the other
// slots (insertions) and stores the first n output bytes at dst.
func expandStore(m int, s reg.VecVirtual, h, lf, mm, n, dst, room reg.Register, zcr, zdot reg.VecVirtual) {
	k := K()
	KMOVQ(mm, k)
	out := ZMM()
	VPEXPANDB_Z(s, k, out)
	q := GP64() // inserted slots
	MOVQ(mm, q)
	NOTQ(q)
	BZHIQ(n, q, q)
	if m == compat {
		// The slots before LFs get CR, the others '.'.
		il := GP64()
		MOVQ(h, il)
		ANDQ(lf, il)
		PDEPQ(mm, il, il)
		SHRQ(U8(1), il)
		ANDNQ(q, il, q)
		kl := K()
		KMOVQ(il, kl)
		VMOVDQU8(zcr, kl, out)
	}
	kq := K()
	KMOVQ(q, kq)
	VMOVDQU8(zdot, kq, out)
	storeLowZ(out, n, dst, room)
}

// cleanLoopZ emits, at label p+"_clean", the copy loop for long lines:
// the block v at src (no CR or LF, not starting a line) is stored, then
// blocks are copied four at a time while none of them has a byte <= '\r'
// (their unsigned minimum, one compare: CR, LF and the rarer other
// control bytes), and one at a time otherwise. The first block with a CR
// or LF goes to resume (the decoders' p+"_masks", the encoders'
// p+"_cleanexit") with v, klf and kcr holding it and its LF and CR masks;
// the end of src or dst goes to general, with the line state
// registers in state (cbol, and ccr where the general path reads it) 0.
// With a line limit (lim not nil), the loops copy only blocks that the limit
// allows whole, and go to general (at the entry) or resume otherwise.
func cleanLoopZ(p string, src, dst, srcLim, dstLim, dirty reg.Register, v reg.VecVirtual, klf, kcr reg.Register, zlf, zcr reg.VecVirtual, general, resume string, lim *lineLimit, state ...reg.Register) {
	Label(p + "_clean")
	// The loop copies only bytes that are neither CR nor LF, so wherever
	// it stops, the byte before src is neither: no line start, no CR. The
	// Compat loops enter with cbol and ccr out of date (they compare the
	// bytes before a block in memory), and the general path reads them.
	for _, r := range state {
		MOVQ(U32(0), r) // (not XORQ, which avo counts as a read)
	}
	if lim != nil {
		lim.check(general)
	}
	Label(p + "_clean0")
	VMOVDQU64(v, Mem{Base: dst})
	// Go on from where dst is aligned to 64 bytes, at most 64 bytes on
	// (the rest of v is copied again): stores that do not cross cache
	// lines are cheaper.
	t := GP64()
	MOVQ(dst, t)
	ANDQ(U8(63), t)
	NEGQ(t)
	ADDQ(U8(64), t)
	ADDQ(t, dst)
	ADDQ(t, src)
	lim.advance(t)
	// Blocks without CR or LF need no byte after them: these loops go on
	// while 64 bytes of src and dst are left, not 65 (srcLim, dstLim).
	Label(p + "_clean4")
	LEAQ(Mem{Base: src, Disp: 191}, t)
	CMPQ(t, srcLim)
	JGT(LabelRef(p + "_clean1"))
	LEAQ(Mem{Base: dst, Disp: 191}, t)
	CMPQ(t, dstLim)
	JGT(LabelRef(p + "_clean1"))
	if lim != nil {
		lim.checkBy(192, p+"_clean1")
	}
	w, x, y := ZMM(), ZMM(), ZMM()
	VMOVDQU64(Mem{Base: src}, v)
	VMOVDQU64(Mem{Base: src, Disp: 64}, w)
	VMOVDQU64(Mem{Base: src, Disp: 128}, x)
	VMOVDQU64(Mem{Base: src, Disp: 192}, y)
	m1, m2 := ZMM(), ZMM()
	VPMINUB(v, w, m1)
	VPMINUB(x, y, m2)
	VPMINUB(m1, m2, m1)
	k1 := K()
	VPCMPUB(U8(2), zcr, m1, k1) // m1 <= '\r'
	KORTESTQ(k1, k1)
	JNZ(LabelRef(p + "_clean1"))
	VMOVDQU64(v, Mem{Base: dst})
	VMOVDQU64(w, Mem{Base: dst, Disp: 64})
	VMOVDQU64(x, Mem{Base: dst, Disp: 128})
	VMOVDQU64(y, Mem{Base: dst, Disp: 192})
	ADDQ(U32(256), dst)
	ADDQ(U32(256), src)
	lim.advance(U32(256))
	JMP(LabelRef(p + "_clean4"))

	Label(p + "_clean1")
	LEAQ(Mem{Base: src, Disp: -1}, t)
	CMPQ(t, srcLim)
	JGT(LabelRef(general))
	LEAQ(Mem{Base: dst, Disp: -1}, t)
	CMPQ(t, dstLim)
	JGT(LabelRef(general))
	VMOVDQU64(Mem{Base: src}, v)
	VPCMPEQB(zlf, v, klf)
	VPCMPEQB(zcr, v, kcr)
	KORTESTQ(klf, kcr)
	if lim == nil {
		JZ(LabelRef(p + "_clean0"))
	} else {
		JNZ(LabelRef(p + "_clean1x"))
		CMPQ(lim.load(), lim.limFast)
		JLE(LabelRef(p + "_clean0"))
		Label(p + "_clean1x")
	}
	// The mask paths need the 65 bytes.
	CMPQ(src, srcLim)
	JGT(LabelRef(general))
	CMPQ(dst, dstLim)
	JGT(LabelRef(general))
	MOVQ(U32(3), dirty)
	if lim != nil {
		lim.check(general)
	}
	JMP(LabelRef(resume))
}

// decodeBody512 generates the loop of the AVX-512 decoders (m) for the
// common case: the CRs of the block are exactly the bytes before its LFs,
// and no dot that starts a line is before a CR. Then nothing stops the
// block: its line-leading dots are deleted, and in Compat and Strict mode
// its CRs (a Raw block with no dot is stored as it is). This
// loop runs for nearly all of ordinary text, and its speed is bound by the
// number of instructions, so it uses as few as it can:
//   - the look-ahead and look-behind compares read memory directly (a byte
//     starts a line if the byte before it, in memory, is an LF: so the
//     first block of a call, whose byte before is not ours, goes through
//     the mask path, and cbol is only brought up to date on the way out:
//     to the mask path here, to the general path by the long-line loop);
//   - the CR and look-ahead LF masks are taken negated, which is what the
//     compaction and the output count need;
//   - src and dst advance by index, under one bound (dst advances no more
//     than src);
//   - the long-line loop is entered after three blocks in a row without a
//     CR (dirty counts them down; a block through the mask path may count
//     as one).
//
// With CRs only before LFs, an LF can start a line, or in Strict and Raw
// mode be bare, only at the block's first byte, and only when the block
// before did not go through this loop (that block's look-ahead would have
// seen it): the entries check that (in Strict and Raw mode, where ccr
// holds whether the byte before is a CR; the loop itself does not keep
// ccr, and sets it on the way out).
// Any other block goes on at p+"_full" with v, klf and kcr set; the
// long-line loop comes back at p+"_masks" with v set.
//
// With a line limit (ll not nil), a block that might break it leaves for
// general.
func decodeBody512(m int, p string, src, dst, srcLim, dstLim, cbol, ccr, dirty reg.Register, v reg.VecVirtual, klf, kcr reg.Register, zlf, zcr, zdot reg.VecVirtual, general string, ll *lineLimit) {
	src0 := Load(Param("src").Base(), GP64())
	CMPQ(src, src0)
	JEQ(LabelRef(p + "_first"))
	if m != compat { // Raw, Strict
		// An LF at src if and only if a CR is before it.
		t := GP64()
		XORQ(t, t)
		CMPB(Mem{Base: src}, U8('\n'))
		SETEQ(t.As8())
		CMPQ(t, ccr)
		JNE(LabelRef(general))
	} else {
		TESTQ(cbol, cbol)
		JZ(LabelRef(p + "_enter"))
		CMPB(Mem{Base: src}, U8('\n'))
		JEQ(LabelRef(general))
	}

	// The loop reads src+i and writes dst+j, j <= i (decoding only
	// deletes), while i <= lim; where it takes two blocks a turn, the
	// second at src+i+64, while i <= lim2.
	i, j, lim, lim2 := GP64(), GP64(), GP64(), GP64() // lim2 is lim less a block
	four := GP64()                                    // the constant 4, loaded at each entry
	var entry Mem                                     // r+1 where the loop was entered
	if ll != nil {
		entry = AllocLocal(8)
	}
	// With a line limit the loop comes in two: one that checks it after
	// each block, and one that need not. A block with a CR leaves at
	// most 63 bytes of a line (r+1 <= 63), and at most two blocks in a
	// row without a CR go through the loop (see dirty), so a line there
	// grows by at most 128 bytes past the last such block or the entry:
	// where the limit is that far off (r+1 at the entry plus 128, and 191,
	// both at most limFast), nothing needs checking. Either way r+1 is
	// made exact where the loop leaves (settleBody).
	body, test := p+"_body", p+"_test"
	bodyFree, testFree := body, test
	if ll != nil {
		bodyFree, testFree = p+"_bodyu", p+"_testu"
	}
	// enter sets the loop up and goes on at the checked loop's label
	// checked or the free loop's free.
	enter := func(checked, free string) {
		loopLimit(src, dst, srcLim, dstLim, lim)
		LEAQ(Mem{Base: lim, Disp: -64}, lim2)
		XORQ(i, i)
		XORQ(j, j)
		MOVQ(U32(4), four)
		if ll == nil {
			JMP(LabelRef(free))
			return
		}
		// The loop counts an LF in the block of the CR before it (r+1
		// after a block is the bytes after its last CR): an LF at the
		// start of the first block, whose CR came before, is counted
		// here, and makes r+1 0.
		skip := uniq("lf0")
		CMPB(Mem{Base: src}, U8('\n'))
		JNE(LabelRef(skip))
		ll.set(I32(-1))
		Label(skip)
		ll.advance(U8(1))
		r := ll.load()
		MOVQ(r, entry)
		t := GP64()
		LEAQ(Mem{Base: r, Disp: 128}, t)
		CMPQ(t, ll.limFast)
		JGT(LabelRef(checked))
		MOVQ(U32(191), t)
		CMPQ(t, ll.limFast)
		JGT(LabelRef(checked))
		JMP(LabelRef(free))
	}
	leave := func() {
		if ll != nil {
			settleBody(p, src, i, entry, zcr, ll)
		}
		ADDQ(i, src)
		ADDQ(j, dst)
		if ll != nil {
			ll.advance(I8(-1)) // r again
		}
	}
	Label(p + "_enter")
	enter(body, bodyFree)

	// block generates the loop's work on the block at src+i+d, loaded in
	// v: it leaves for fx (the mask path; for d 64, a step that first
	// moves i to the block), cx (the long-line loop, likewise) or
	// side (line-leading dots, which goes on at tail), or stores the
	// block and goes on. It returns what generates side, to be placed
	// out of the loop's way.
	block := func(d int, fx, cx, side, tail string, checked bool) func() {
		kncr, knn := K(), K()
		VPCMPB(U8(4), zcr, v, kncr)                                              // not CR
		VPCMPB(U8(4), Mem{Base: src, Index: i, Scale: 1, Disp: d + 1}, zlf, knn) // next is not LF
		ncr, nnlf := GP64(), GP64()
		KMOVQ(kncr, ncr)
		KMOVQ(knn, nnlf)
		CMPQ(ncr, nnlf)
		JNE(LabelRef(fx))
		// dirty counts down from 3 after a block with a CR (4, less
		// this block): the decrement sets the flags the exit tests.
		CMPQ(ncr, I8(-1))
		CMOVQNE(four, dirty)
		if checked {
			// r+1 is only a bound here: at most 63 after a block with
			// a CR (the last LF follows the last CR), and 64 more after
			// one without.
			r := ll.load()
			LEAQ(Mem{Base: r, Disp: 64}, r)
			CMOVQNE(sixtyThree(), r)
		}
		DECQ(dirty)
		JZ(LabelRef(cx))
		kp, kd := K(), K()
		VPCMPEQB(Mem{Base: src, Index: i, Scale: 1, Disp: d - 1}, zlf, kp) // after an LF
		VPCMPEQB(zdot, v, kp, kd)
		KORTESTQ(kd, kd)
		JNZ(LabelRef(side))
		if m == raw {
			VMOVDQU64(v, Mem{Base: dst, Index: j, Scale: 1})
			ADDQ(U8(64), j)
		} else {
			cnt := GP64()
			POPCNTQ(ncr, cnt)
			out := ZMM()
			VPCOMPRESSB_Z(v, kncr, out)
			// dst has room for 64 bytes: store them all (past the kept
			// ones, dst is scratch space until overwritten).
			VMOVDQU64(out, Mem{Base: dst, Index: j, Scale: 1})
			ADDQ(cnt, j)
		}
		// Line-leading dots (one line in 50 in mail): deleted with the
		// CRs, unless one is before a CR (an end marker, or a quirk the
		// mask path decides; one before an LF broke the CR-LF pairs).
		return func() {
			Label(side)
			kcrd := K()
			VPCMPEQB(Mem{Base: src, Index: i, Scale: 1, Disp: d + 1}, zcr, kd, kcrd)
			KORTESTQ(kcrd, kcrd)
			JNZ(LabelRef(fx))
			keep := K()
			if m == raw {
				KNOTQ(kd, keep)
			} else {
				KANDNQ(kncr, kd, keep)
			}
			n := GP64()
			KMOVQ(keep, n)
			POPCNTQ(n, n)
			out := ZMM()
			VPCOMPRESSB_Z(v, keep, out)
			VMOVDQU64(out, Mem{Base: dst, Index: j, Scale: 1})
			ADDQ(n, j)
			JMP(LabelRef(tail))
		}
	}
	loop := func(body, test string, checked bool) {
		tail := body + "_tail"
		Label(body)
		prefetch(Mem{Base: src, Index: i, Scale: 1})
		VMOVDQU64(Mem{Base: src, Index: i, Scale: 1}, v)
		Label(test)
		side := block(0, p+"_fullx", p+"_cleanx", body+"_dots", tail, checked)
		Label(tail)
		ADDQ(U8(64), i)
		if checked {
			// (Checked against limFast, r+1 is checked a byte early.)
			ll.check(p + "_genx")
			CMPQ(i, lim)
			JLE(LabelRef(body))
			JMP(LabelRef(p + "_genx"))
			side()
			return
		}
		// In the loop that need not check a line limit, two blocks go
		// in a turn where both fit (i <= lim2): the second is read at
		// src+i+64, with the byte after it.
		body2, mid, tail2 := body+"2", body+"2_mid", body+"2_tail"
		CMPQ(i, lim2)
		JLE(LabelRef(body2))
		CMPQ(i, lim)
		JLE(LabelRef(body))
		JMP(LabelRef(p + "_genx"))

		Label(body2)
		prefetch(Mem{Base: src, Index: i, Scale: 1})
		prefetch(Mem{Base: src, Index: i, Scale: 1, Disp: 64})
		VMOVDQU64(Mem{Base: src, Index: i, Scale: 1}, v)
		side0 := block(0, p+"_fullx", p+"_cleanx", body2+"_dots0", mid, false)
		Label(mid)
		VMOVDQU64(Mem{Base: src, Index: i, Scale: 1, Disp: 64}, v)
		side1 := block(64, body2+"_fullx", body2+"_cleanx", body2+"_dots1", tail2, false)
		Label(tail2)
		ADDQ(U8(128), i)
		CMPQ(i, lim2)
		JLE(LabelRef(body2))
		CMPQ(i, lim)
		JLE(LabelRef(body))
		JMP(LabelRef(p + "_genx"))
		// The second block leaves as the first would, from its own start.
		Label(body2 + "_fullx")
		ADDQ(U8(64), i)
		JMP(LabelRef(p + "_fullx"))
		Label(body2 + "_cleanx")
		ADDQ(U8(64), i)
		JMP(LabelRef(p + "_cleanx"))
		side()
		side0()
		side1()
	}
	loop(bodyFree, testFree, false)
	if ll != nil {
		loop(body, test, true)
	}

	// The state the other paths read: the line start, and in Strict and
	// Raw mode whether a CR is before src.
	state := func() {
		afterLF(src, cbol)
		if m != compat {
			afterByte(src, ccr, '\r')
		}
	}
	Label(p + "_genx")
	leave()
	state()
	JMP(LabelRef(general))

	Label(p + "_cleanx")
	leave()
	JMP(LabelRef(p + "_clean"))

	// The long-line loop comes back at a block with a byte <= '\r', at
	// src, with cbol and ccr 0 (in Strict and Raw mode an LF there is
	// bare).
	Label(p + "_masks")
	if m != compat {
		CMPB(Mem{Base: src}, U8('\n'))
		JEQ(LabelRef(p + "_fully"))
	}
	enter(test, testFree)

	// The first block of a call (whose byte before is not ours, but
	// cbol is right) goes through the mask path.
	Label(p + "_first")
	VMOVDQU64(Mem{Base: src}, v)
	JMP(LabelRef(p + "_fully"))

	Label(p + "_fullx")
	leave()
	state()
	Label(p + "_fully")
	MOVQ(U32(3), dirty)
	VPCMPEQB(zlf, v, klf)
	VPCMPEQB(zcr, v, kcr)
	Label(p + "_full")
}

// settleBody makes r+1 exact at src+i, where decodeBody512's loop leaves:
// in its blocks every CR is before an LF, so the last line ends at the
// last CR before src+i (r+1 is the bytes after it), looked for in the
// last block, then searched back to src, where the loop was entered; with
// none there, r+1 is entry plus i.
func settleBody(p string, src, i reg.Register, entry Mem, zcr reg.VecVirtual, ll *lineLimit) {
	loop, none, done := uniq(p+"_back"), uniq(p+"_since"), uniq(p+"_settled")
	q, t := GP64(), GP64()
	TESTQ(i, i)
	JZ(LabelRef(none))
	v, k := ZMM(), K()
	VMOVDQU64(Mem{Base: src, Index: i, Scale: 1, Disp: -64}, v)
	VPCMPEQB(zcr, v, k)
	KMOVQ(k, t)
	LZCNTQ(t, t) // CF: no CR
	JCS(LabelRef(loop + "_far"))
	ll.set(t)
	JMP(LabelRef(done))
	// A line longer than a block: byte by byte.
	Label(loop + "_far")
	LEAQ(Mem{Base: src, Index: i, Scale: 1, Disp: -64}, q)
	Label(loop)
	CMPQ(q, src)
	JEQ(LabelRef(none))
	DECQ(q)
	CMPB(Mem{Base: q}, U8('\r'))
	JNE(LabelRef(loop))
	LEAQ(Mem{Base: src, Index: i, Scale: 1, Disp: -1}, t)
	SUBQ(q, t)
	ll.set(t)
	JMP(LabelRef(done))
	Label(none)
	MOVQ(entry, t)
	ADDQ(i, t)
	ll.set(t)
	Label(done)
}

var sixtyThreeMem *Mem

// sixtyThree is a read-only 8-byte constant 63.
func sixtyThree() Mem {
	if sixtyThreeMem == nil {
		m := GLOBL("sixtyThree", RODATA|NOPTR)
		DATA(0, U64(63))
		sixtyThreeMem = &m
	}
	return *sixtyThreeMem
}

// afterLF sets cbol to 1 if the byte before src is an LF, else to 0.
func afterLF(src, cbol reg.Register) {
	MOVQ(U32(0), cbol) // (not XORQ, which avo counts as a read)
	CMPB(Mem{Base: src, Disp: -1}, U8('\n'))
	SETEQ(cbol.(reg.GPVirtual).As8())
}

// encodeBody512 generates the loop of the AVX-512 encoders (m) for the
// common case, a block that is copied as it is (every LF comes right after
// a CR and every CR right before an LF, and no dot starts a line) or with
// one line-leading dot stuffed. As in decodeBody512, its speed is bound by
// the number of instructions: the bytes before the block's bytes are
// compared in memory (so the first block of a call goes through the mask
// path, and cbol and ccr are only brought up to date on the way out: to
// the mask path here, to the general path by the long-line loop), and
// dirty counts down the blocks without LF (so without CR, but maybe the
// last) before the long-line loop. Any other block goes on to the mask
// path, which follows the call, with v, klf and kcr set; the long-line
// loop comes back at p+"_cleanexit" with v set.
//
// The Strict encoder runs it too: for such blocks the two give the same
// output. But a block's last CR is checked with the next block, and
// Strict must not take a CR that turns out bare, so on the way out it
// gives such a CR back (src and dst move back over it).
func encodeBody512(m int, p string, src, dst, srcLim, dstLim, cbol, ccr, dirty reg.Register, v reg.VecVirtual, klf, kcr reg.Register, zlf, zcr, zdot reg.VecVirtual, general string) {
	src0 := Load(Param("src").Base(), GP64())
	CMPQ(src, src0)
	JEQ(LabelRef(p + "_first"))

	// The loop reads src+i and writes dst+j, while i <= lim. It copies
	// blocks as they are, so j moves with i but for the dots it inserts:
	// lim is one less for each, to keep room for 65 bytes at dst+j (where
	// src is what limits it, the loop then leaves a block early at most).
	i, j, lim := GP64(), GP64(), GP64()
	enter := func() {
		loopLimit(src, dst, srcLim, dstLim, lim)
		XORQ(i, i)
		XORQ(j, j)
	}
	// giveBack gives back, in Strict mode, a CR before src (whose
	// successor, at src, the loop did not check), with reload the block
	// at src in v and its LFs in klf.
	giveBack := func(reload bool) {
		if m != strict {
			return
		}
		giveBackCR(p, src, dst, func() {
			if reload {
				VMOVDQU64(Mem{Base: src}, v)
				VPCMPEQB(zlf, v, klf)
			}
		})
	}
	enter()
	Label(p + "_body")
	prefetch(Mem{Base: src, Index: i, Scale: 1})
	VMOVDQU64(Mem{Base: src, Index: i, Scale: 1}, v)
	Label(p + "_test")
	vp := ZMM()
	VMOVDQU64(Mem{Base: src, Index: i, Scale: 1, Disp: -1}, vp) // the bytes before
	kpcr := K()
	VPCMPEQB(zlf, v, klf)
	VPCMPEQB(zcr, vp, kpcr)
	lf, pcr := GP64(), GP64()
	KMOVQ(klf, lf)
	KMOVQ(kpcr, pcr)
	CMPQ(lf, pcr)
	JNE(LabelRef(p + "_fullx"))
	// Three blocks in a row without LF enter the long-line loop: dirty
	// is 3 after a block with LF, else one less than before.
	NEGQ(lf) // CF = lf != 0
	SBBQ(pcr, pcr)
	ANDQ(U8(3), pcr)
	DECQ(dirty)
	ORQ(pcr, dirty)
	JZ(LabelRef(p + "_cleanx"))
	kp, kd := K(), K()
	VPCMPEQB(zlf, vp, kp) // after an LF
	VPCMPEQB(zdot, v, kp, kd)
	KORTESTQ(kd, kd)
	JNZ(LabelRef(p + "_dots"))
	VMOVDQU64(v, Mem{Base: dst, Index: j, Scale: 1})
	ADDQ(U8(64), j)
	Label(p + "_lean")
	ADDQ(U8(64), i)
	CMPQ(i, lim)
	JLE(LabelRef(p + "_body"))

	ADDQ(i, src)
	ADDQ(j, dst)
	giveBack(false)
	afterByte(src, cbol, '\n')
	afterByte(src, ccr, '\r')
	JMP(LabelRef(general))

	// A line-leading dot (one line in 50 in mail) gets its stuffing dot
	// here, where it is the block's only one: the block goes to dst+j+1,
	// then its bytes before the dot, a dot, and the rest but the last, to
	// dst+j (the block expanded around a gap at the dot, into dots).
	Label(p + "_dots")
	d := GP64()
	KMOVQ(kd, d)
	t := GP64()
	BLSRQ(d, t)
	JNZ(LabelRef(p + "_fullx"))
	NOTQ(d)
	kx := K()
	KMOVQ(d, kx)
	out := ZMM()
	VMOVDQA64(zdot, out)
	VPEXPANDB(v, kx, out)
	VMOVDQU64(v, Mem{Base: dst, Index: j, Scale: 1, Disp: 1})
	VMOVDQU64(out, Mem{Base: dst, Index: j, Scale: 1})
	ADDQ(U8(65), j)
	DECQ(lim)
	JMP(LabelRef(p + "_lean"))

	// The long-line loop takes blocks without CR or LF. This one has no
	// LF, and a CR only as its last byte (whose LF comes next): the loop
	// tests the next block, and leaves a CR, if any, to the mask path.
	Label(p + "_cleanx")
	ADDQ(i, src)
	ADDQ(j, dst)
	VPCMPEQB(zcr, v, kcr)
	KORTESTQ(kcr, kcr)
	JZ(LabelRef(p + "_clean"))
	MOVQ(U32(3), dirty)
	JMP(LabelRef(p + "_fully"))

	// The long-line loop ends at a block with a byte <= '\r', at src.
	Label(p + "_cleanexit")
	MOVQ(U32(3), dirty)
	enter()
	JMP(LabelRef(p + "_test"))

	// The first block of a call (whose byte before is not ours, but cbol
	// and ccr are right) goes through the mask path.
	Label(p + "_first")
	VMOVDQU64(Mem{Base: src}, v)
	VPCMPEQB(zlf, v, klf)
	MOVQ(U32(3), dirty)
	JMP(LabelRef(p + "_fullz"))

	Label(p + "_fullx")
	ADDQ(i, src)
	ADDQ(j, dst)
	giveBack(true)
	MOVQ(U32(3), dirty)
	Label(p + "_fully")
	afterByte(src, cbol, '\n')
	afterByte(src, ccr, '\r')
	Label(p + "_fullz")
	VPCMPEQB(zcr, v, kcr)
}

// afterByte sets r to 1 if the byte before src is c, else to 0.
func afterByte(src, r reg.Register, c byte) {
	MOVQ(U32(0), r) // (not XORQ, which avo counts as a read)
	CMPB(Mem{Base: src, Disp: -1}, U8(c))
	SETEQ(r.(reg.GPVirtual).As8())
}

// prefetchAhead is how far ahead of src the AVX-512 loops ask for input.
// With src in L3 or memory (a 4 MiB message), the hardware's own
// prefetching left the decoder 11% short on mail (docs/benchmarks.md);
// with src in L2 it changes nothing measurable (Zen 5).
const prefetchAhead = 1024

// prefetch asks for the cache line prefetchAhead bytes past m. A prefetch
// never faults, so the address may lie past src's end.
func prefetch(m Mem) {
	m.Disp += prefetchAhead
	PREFETCHT0(m)
}
