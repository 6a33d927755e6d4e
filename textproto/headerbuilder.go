package textproto

import (
	"bufio"
	"bytes"
	"hash/maphash"
	"math"
	"strconv"
)

// A headerBuilder collects the fields of the MIME header that
// ReadMIMEHeader is reading and builds the MIMEHeader at the end, in few
// allocations and, with a Reader reused for more than one header, in no
// more memory than net/textproto's ReadMIMEHeader takes for the same
// input:
//
//   - the values are gathered in a scratch buffer of at most maxChunk
//     bytes, which is copied into an exactly sized string when it is full
//     and at the end; the header's values are substrings of those strings
//     (a value longer than bigValue gets a string of its own);
//   - keys are told apart as they are read (common keys among the first
//     maxCommon by their index, the others through a hash table), so each
//     distinct key is stored once (net/textproto allocates a key for each
//     field) and the map is made with its final size;
//   - every key's values get an exact, full-capacity part of one []string,
//     so no value slice grows by appending.
//
// The scratch slices grow by doubling (the built-in append grows large
// slices by only a quarter, which allocates about five times their final
// size in all) and are kept for the next header while they take no more
// than keepScratch bytes in all. The per-key and per-field scratch grows
// instead by segments of segLen, which are never copied: copies by
// doubling allocate about twice the final size, and where int and
// pointers have 4 bytes that outweighs what the map made at its final
// size saves on net/textproto's growing one (whose slots, unlike these
// int32, uint32 and uint16, shrink by half).
type headerBuilder struct {
	br     *bufio.Reader // the source, for sizing the scratch
	text   []byte        // the values since the last chunk
	chunks []string      // the values before, in strings of up to maxChunk bytes
	big    []string      // the values longer than bigValue, in field order
	kbuf   []byte        // the key being canonicalized
	keys   [][]hdrKey    // the distinct keys, in the order they first came, segLen a segment
	segs   []fieldSeg    // the fields' segments, filled up to cur or kept for reuse
	table  []int32       // open addressing over the keys not in common: index+1
	cur    int           // the segment of segs being filled
	nfield int           // fields in all
	nkeys  int32         // len(keys) in all
	hashed int32         // keys in table
	seed   maphash.Seed  // table's; zero until the first key is hashed
	// common holds the index+1 in keys of each common key seen among the
	// first maxCommon keys; a common key that comes later is hashed.
	common [len(commonKeys)]uint8
}

// A fieldSeg is a segment of the fields: the first one has the capacity
// reset gave it, the others segLen.
type fieldSeg struct {
	field []uint32 // per field: its key (index in keys) | inBig
	vlen  []uint16 // per field: its value's length if in a chunk
}

// A hdrKey is a distinct key of the header.
type hdrKey struct {
	s string
	n int32 // its fields; while build runs, where its next value goes
}

const (
	// inBig marks a field whose value is in big. (Key indexes stay below
	// it: 2^31 distinct keys would take hundreds of GiB, in net/textproto
	// as here.)
	inBig = 1 << 31

	// bigValue is the longest value gathered in the scratch buffer (its
	// length fits in vlen).
	bigValue = 2 << 10

	// maxChunk bounds the scratch buffer, which a Reader keeps.
	maxChunk = 8 << 10

	// segLen is the length of a segment of keys or fields, a power of
	// two for keys to be indexed by shifts.
	segShift = 8
	segLen   = 1 << segShift

	// hdrKeySize is the size of a hdrKey: a string header, then an int32
	// padded to int's size.
	hdrKeySize = stringHeaderSize + strconv.IntSize/8

	// sliceHeaderSize is the size of a slice header.
	sliceHeaderSize = 3 * strconv.IntSize / 8

	// maxCommon is how many keys may come before a common key for it to
	// be found by its place in commonKeys rather than hashed.
	maxCommon = math.MaxUint8
)

// reset prepares b for a new header read from br.
func (b *headerBuilder) reset(br *bufio.Reader) {
	b.br = br
	if len(b.segs) == 0 {
		// First use: room for the fields R's buffer shows, and the first
		// segments' headers in one allocation.
		p, _ := br.Peek(br.Buffered())
		p, _ = headerPart(p)
		n := min(bytes.Count(p, []byte("\n"))+1, segLen)
		first := new(struct {
			keys [1][]hdrKey
			segs [1]fieldSeg
		})
		first.keys[0] = make([]hdrKey, 0, n)
		first.segs[0] = fieldSeg{make([]uint32, 0, n), make([]uint16, 0, n)}
		b.keys, b.segs = first.keys[:], first.segs[:]
	}
	b.text = b.text[:0]
	b.chunks = b.chunks[:0]
	b.big = b.big[:0]
	b.keys = b.keys[:1]
	b.keys[0] = b.keys[0][:0]
	b.nkeys = 0
	b.cur, b.nfield = 0, 0
	b.segs[0] = fieldSeg{b.segs[0].field[:0], b.segs[0].vlen[:0]}
	b.common = [len(commonKeys)]uint8{}
	// Whatever hashed says: a copy of the Reader shares the table, and
	// may have filled it since.
	clear(b.table)
	b.hashed = 0
}

// fields returns the number of fields added.
func (b *headerBuilder) fields() int { return b.nfield }

// canonicalKey validates the field name k and returns its canonical form,
// valid until the next call. As in net/textproto, a name with spaces (but
// no other byte that is not a token byte) is accepted as is, without
// canonicalization.
func (b *headerBuilder) canonicalKey(k []byte) ([]byte, bool) {
	if len(k) == 0 {
		return nil, false
	}
	spaces := false
	for _, c := range k {
		if !tokenByte[c] {
			if c != ' ' {
				return nil, false
			}
			spaces = true
		}
	}
	b.kbuf = append(b.kbuf[:0], k...)
	if !spaces {
		canonicalize(b.kbuf, true)
	}
	return b.kbuf, true
}

// add adds a field with the key canonicalKey returned last and value v.
func (b *headerBuilder) add(v []byte) {
	k, isNew := b.lookup(b.kbuf)
	if isNew {
		var s string
		if c, ok := commonHeader[string(b.kbuf)]; ok {
			s = commonKeys[c]
		} else {
			s = string(b.kbuf)
		}
		b.addKey(s)
	}
	b.key(k).n++
	f := uint32(k)
	if len(v) > bigValue {
		f |= inBig
		b.big = grow(b.big, 1)
		b.big = append(b.big, string(v))
	} else {
		b.room(len(v))
		b.text = append(b.text, v...)
	}
	seg := &b.segs[b.cur]
	if len(seg.field) == cap(seg.field) {
		seg = b.nextSeg()
	}
	seg.field = append(seg.field, f)
	seg.vlen = append(seg.vlen, uint16(len(v)))
	b.nfield++
}

// key returns the key of index k.
func (b *headerBuilder) key(k int32) *hdrKey {
	return &b.keys[k>>segShift][k&(segLen-1)]
}

// addKey adds a key: the first segment grows by doubling up to segLen
// (so that a small header takes little), then segments of segLen follow,
// those of earlier headers if kept.
func (b *headerBuilder) addKey(s string) {
	last := &b.keys[len(b.keys)-1]
	if len(*last) == cap(*last) {
		switch n := len(b.keys); {
		case n == 1 && cap(*last) < segLen:
			*last = append(make([]hdrKey, 0, min(2*cap(*last), segLen)), *last...)
		case n < cap(b.keys) && cap(b.keys[:n+1][n]) > 0: // kept
			b.keys = b.keys[:n+1]
			b.keys[n] = b.keys[n][:0]
		default:
			b.keys = append(b.keys, make([]hdrKey, 0, segLen))
		}
		last = &b.keys[len(b.keys)-1]
	}
	*last = append(*last, hdrKey{s: s})
	b.nkeys++
}

// nextSeg goes on from a full segment of fields to the next one, kept
// from an earlier header or new, and returns it.
func (b *headerBuilder) nextSeg() *fieldSeg {
	b.cur++
	if b.cur == len(b.segs) {
		b.segs = append(b.segs, fieldSeg{make([]uint32, 0, segLen), make([]uint16, 0, segLen)})
	}
	seg := &b.segs[b.cur]
	*seg = fieldSeg{seg.field[:0], seg.vlen[:0]}
	return seg
}

// room makes room for need more bytes in text, which stays within
// maxChunk: a full buffer is copied out into chunks. A new buffer is
// given about as much room as the rest of the header in R's buffer, if
// its end is there, or as the buffer holds, so that it rarely grows.
func (b *headerBuilder) room(need int) {
	if len(b.text)+need <= cap(b.text) {
		return
	}
	if len(b.text)+need > maxChunk {
		b.flush()
		if need <= cap(b.text) {
			return
		}
	}
	c := max(2*cap(b.text), len(b.text)+need)
	if cap(b.text) == 0 {
		c = max(c, b.visible())
	}
	b.text = append(make([]byte, 0, min(c, maxChunk)), b.text...)
}

// visible returns the length of the rest of the header in R's buffer, or
// maxChunk if its end is not there.
func (b *headerBuilder) visible() int {
	p, _ := b.br.Peek(b.br.Buffered())
	if p, ok := headerPart(p); ok {
		return len(p)
	}
	return maxChunk
}

// headerPart returns the part of p, buffered input, before the empty line
// that ends the header, and whether p holds that line.
func headerPart(p []byte) ([]byte, bool) {
	found := false
	if i := bytes.Index(p, []byte("\n\r\n")); i >= 0 {
		p, found = p[:i], true
	}
	if i := bytes.Index(p, []byte("\n\n")); i >= 0 {
		p, found = p[:i], true
	}
	return p, found
}

// flush copies text out into chunks.
func (b *headerBuilder) flush() {
	if len(b.text) > 0 {
		b.chunks = grow(b.chunks, 1)
		b.chunks = append(b.chunks, string(b.text))
		b.text = b.text[:0]
	}
}

// lookup returns the index in keys of key, or, if it is new, the index it
// gets and true.
func (b *headerBuilder) lookup(key []byte) (int32, bool) {
	next := b.nkeys
	if c, ok := commonHeader[string(key)]; ok {
		if k := b.common[c]; k > 0 {
			return int32(k) - 1, false
		}
		if next < maxCommon {
			b.common[c] = uint8(next + 1)
			return next, true
		}
	}
	if b.seed == (maphash.Seed{}) {
		b.seed = maphash.MakeSeed()
	}
	if 2*(int(b.hashed)+1) > len(b.table) {
		b.rehash()
	}
	mask := uint64(len(b.table) - 1)
	for i := maphash.Bytes(b.seed, key) & mask; ; i = (i + 1) & mask {
		k := b.table[i] - 1
		if k < 0 {
			b.table[i] = next + 1
			b.hashed++
			return next, true
		}
		if b.key(k).s == string(key) {
			return k, false
		}
	}
}

// rehash doubles the hash table and enters the keys that are not common
// again.
func (b *headerBuilder) rehash() {
	n := max(2*len(b.table), 32)
	if n <= cap(b.table) {
		b.table = b.table[:n]
		clear(b.table)
	} else {
		b.table = make([]int32, n)
	}
	mask := uint64(n - 1)
	k := int32(0)
	for _, seg := range b.keys {
		for _, key := range seg {
			k++ // index+1
			if c, ok := commonHeader[key.s]; ok && int32(b.common[c]) == k {
				continue // not in the table
			}
			i := maphash.String(b.seed, key.s) & mask
			for b.table[i] != 0 {
				i = (i + 1) & mask
			}
			b.table[i] = k
		}
	}
}

// build returns the header of the fields added so far.
func (b *headerBuilder) build() MIMEHeader {
	if cap(b.table)*4 > keepScratch/2 {
		// Not needed any more: let it go before the map is made.
		b.table, b.hashed = nil, 0
	}
	m := make(MIMEHeader, b.nkeys)
	if b.nfield > 0 {
		b.flush()
		vals := make([]string, b.nfield)
		off := 0
		for _, seg := range b.keys {
			for i := range seg {
				k := &seg[i]
				n := int(k.n)
				m[k.s] = vals[off : off+n : off+n]
				k.n = int32(off)
				off += n
			}
		}
		var text string // the chunk being read, from p
		p, ci, bi := 0, 0, 0
		for _, seg := range b.segs[:b.cur+1] {
			vlen := seg.vlen[:len(seg.field)]
			for i, f := range seg.field {
				k := b.key(int32(f &^ inBig))
				if f&inBig != 0 {
					vals[k.n] = b.big[bi]
					bi++
				} else {
					n := int(vlen[i])
					if p+n > len(text) {
						// Not in this chunk: it starts the next one.
						text, p = b.chunks[ci], 0
						ci++
					}
					vals[k.n] = text[p : p+n]
					p += n
				}
				k.n++
			}
		}
	}
	clear(b.chunks) // let the header's text go with the header
	clear(b.big)
	for _, seg := range b.keys {
		clear(seg)
	}
	// Keep the scratch for the next header unless it is big.
	if b.scratchSize() > keepScratch {
		*b = headerBuilder{seed: b.seed}
	}
	return m
}

// scratchSize returns the bytes of scratch b holds.
func (b *headerBuilder) scratchSize() int {
	n := cap(b.text) + cap(b.kbuf) + stringHeaderSize*(cap(b.chunks)+cap(b.big)) + 4*cap(b.table) +
		sliceHeaderSize*cap(b.keys) + 2*sliceHeaderSize*cap(b.segs)
	for _, seg := range b.keys[:cap(b.keys)] {
		n += hdrKeySize * cap(seg)
	}
	for _, seg := range b.segs {
		n += 4*cap(seg.field) + 2*cap(seg.vlen)
	}
	return n
}

// grow returns s with room for n more elements, doubling its capacity when
// it must grow.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	c := 2 * cap(s)
	if c < len(s)+n {
		c = 2 * (len(s) + n)
	}
	return append(make([]T, 0, c), s...)
}
