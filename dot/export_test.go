package dot

// Exported for testing only: the kernels by name, and a way to run one.

// A kernel is one decoding and encoding kernel.
type kernel struct {
	name string
	id   kernelID
}

var (
	genericKernel = kernel{name: "generic", id: kGeneric}
	allKernels    = []kernel{genericKernel, {name: "avx2", id: kAVX2}, {name: "avx512", id: kAVX512}}
)

// kernels lists the kernels this build and CPU can run, best last.
func kernels() []kernel {
	var ks []kernel
	for _, k := range allKernels {
		if kernelAvailable(k.id) {
			ks = append(ks, k)
		}
	}
	return ks
}

// useKernel makes decode and encode run the named kernel (one of kernels())
// and returns a function that restores the previous choice. It reports
// false if this CPU or build lacks that kernel. It must not run
// concurrently with decoding or encoding.
func useKernel(name string) (restore func(), ok bool) {
	for _, k := range allKernels {
		if k.name == name && kernelAvailable(k.id) {
			return setKernel(k.id), true
		}
	}
	return func() {}, false
}
