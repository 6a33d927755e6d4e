//go:build !amd64 || purego

package dot

// Without SIMD kernels (another architecture, or the purego build tag), the
// generic kernel is the only one.

func bestKernel() kernel { return genericKernel }

// kernels lists the kernels this build and CPU can run.
func kernels() []kernel { return []kernel{genericKernel} }
