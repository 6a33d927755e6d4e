package dot

// Kernels. decode and encode run the kernel chosen for this CPU: the
// generic one (decodeGeneric, encodeGeneric), which is the reference, or a
// SIMD one (kernel_amd64.go). Every kernel produces exactly what the
// generic one produces: the same output, consumption, state and errors.
//
// decode and encode dispatch on the kernel's id with a switch rather than
// through function values, so that escape analysis sees every call and dst
// and src do not escape (a caller may decode into a stack array without
// allocating).

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

// Kernel names the kernel that decodes and encodes on this machine:
// "avx512" (AVX-512 VBMI2), "avx2" or "generic" (pure Go, and always with
// the purego build tag). It is meant for tools and benchmark reports.
func Kernel() string {
	switch activeKernel() {
	case kAVX512:
		return "avx512"
	case kAVX2:
		return "avx2"
	}
	return "generic"
}
