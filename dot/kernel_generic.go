package dot

// decode and encode are the kernels in use. Until SIMD kernels exist, they
// are the generic ones on every platform.
func decode(d *Decoder, dst, src []byte) (int, int) { return decodeGeneric(d, dst, src) }
func encode(e *Encoder, dst, src []byte) (int, int) { return encodeGeneric(e, dst, src) }
