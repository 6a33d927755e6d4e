package dot

// Kernels. decode and encode run the kernel chosen for this CPU: the
// generic one (decodeGeneric, encodeGeneric), which is the reference, or a
// SIMD one (kernel_amd64.go). Every kernel produces exactly what the
// generic one produces: the same output, consumption, state and errors.

// A kernel names a pair of decoding and encoding kernels. decode and encode
// dispatch on its id with a switch rather than through function values, so
// that escape analysis sees every call and dst and src do not escape (a
// caller may decode into a stack array without allocating).
type kernel struct {
	name string
	id   kernelID
}

// A kernelID identifies a kernel.
type kernelID uint8

const (
	kGeneric kernelID = iota
	kAVX2
	kAVX512
)

// asmChunk bounds the input of one call of an assembly kernel, so that the
// goroutine can be preempted between calls.
const asmChunk = 64 << 10

var genericKernel = kernel{name: "generic", id: kGeneric}

// active is the kernel in use, chosen once at start-up (tests may swap it
// with useKernel). decode and encode (kernel_amd64.go, kernel_other.go)
// dispatch on active.id.
var active = bestKernel()

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
