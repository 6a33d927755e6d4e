//go:build !amd64 || purego

package dot

// Without SIMD kernels (another architecture, or the purego build tag), the
// generic kernel is the only one.

func activeKernel() kernelID { return kGeneric }

func decode(d *Decoder, dst, src []byte) (int, int) { return decodeGeneric(d, dst, src) }
func encode(e *Encoder, dst, src []byte) (int, int) { return encodeGeneric(e, dst, src) }
