package dot

// Kernels. decode and encode run the kernel chosen for this CPU: the
// generic one (decodeGeneric, encodeGeneric), which is the reference, or a
// SIMD one (kernel_amd64.go). Every kernel produces exactly what the
// generic one produces: the same output, consumption, state and errors.

// A kernel is a pair of decoding and encoding kernels.
type kernel struct {
	name   string
	decode func(d *Decoder, dst, src []byte) (int, int)
	encode func(e *Encoder, dst, src []byte) (int, int)
}

// asmChunk bounds the input of one call of an assembly kernel, so that the
// goroutine can be preempted between calls.
const asmChunk = 64 << 10

var genericKernel = kernel{name: "generic", decode: decodeGeneric, encode: encodeGeneric}

// active is the kernel in use, chosen once at start-up (tests may swap it
// with useKernel).
var active = bestKernel()

func decode(d *Decoder, dst, src []byte) (int, int) { return active.decode(d, dst, src) }
func encode(e *Encoder, dst, src []byte) (int, int) { return active.encode(e, dst, src) }

// Kernel names the kernel that decodes and encodes on this machine:
// "avx512" (AVX-512 VBMI2), "avx2" or "generic" (pure Go, and always with
// the purego build tag). It is meant for tools and benchmark reports.
func Kernel() string { return active.name }

// useKernel makes the named kernel (one of kernels()) the active one and
// returns a function that restores the previous one. It reports false if
// this CPU or build lacks that kernel. For tests and benchmarks only: it
// must not run concurrently with decoding or encoding.
func useKernel(name string) (restore func(), ok bool) {
	for _, k := range kernels() {
		if k.name == name {
			prev := active
			active = k
			return func() { active = prev }, true
		}
	}
	return func() {}, false
}
