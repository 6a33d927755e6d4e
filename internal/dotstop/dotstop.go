// Package dotstop finds where a dot.Decoder stops on a problem with the
// data: what textproto's DotReader and smtpsink's loops engine count a
// discard bound from, so that both count it from the same byte.
package dotstop

import "github.com/wirespeed/wirespeed/dot"

// Offset returns how many bytes of src dec consumes up to and including
// the byte at which it finds a problem with the data (len(src) if it finds
// none). dec is a copy: the caller's decoder is left as it was. Offset
// decodes into scratch space, 64 bytes and then one byte at a time; it is
// meant to run once, for a block that fails.
func Offset(dec dot.Decoder, src []byte) int {
	for off := 0; off < len(src); {
		end := min(off+64, len(src))
		probe := dec
		feed(&probe, src[off:end])
		if probe.Err() == nil {
			dec, off = probe, end
			continue
		}
		for ; off < end; off++ {
			if feed(&dec, src[off:off+1]); dec.Err() != nil {
				return off + 1
			}
		}
	}
	return len(src)
}

// feed decodes src with dec into scratch space and drops the output.
func feed(dec *dot.Decoder, src []byte) {
	var scratch [256]byte
	for len(src) > 0 {
		_, ns, err := dec.Transform(scratch[:], src, false)
		src = src[ns:]
		if ns == 0 || err != nil && err != dot.ErrShortDst {
			return
		}
	}
}
