//go:build !amd64 || purego

package dot

// Without SIMD kernels (another architecture, or the purego build tag), the
// generic kernel is the only one.

func bestKernel() kernel { return genericKernel }

// kernels lists the kernels this build and CPU can run.
func kernels() []kernel { return []kernel{genericKernel} }

func decode(d *Decoder, dst, src []byte) (int, int) { return decodeGeneric(d, dst, src) }
func encode(e *Encoder, dst, src []byte) (int, int) { return encodeGeneric(e, dst, src) }
