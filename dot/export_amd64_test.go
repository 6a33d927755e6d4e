//go:build !purego

package dot

func kernelAvailable(id kernelID) bool {
	switch id {
	case kAVX512:
		return hasAVX512()
	case kAVX2:
		return hasAVX2()
	}
	return true
}

// setKernel turns the feature booleans so that kernel id, which must be
// available, runs, and returns a function that restores them.
func setKernel(id kernelID) (restore func()) {
	avx512, avx2 := useAVX512, useAVX2
	useAVX512, useAVX2 = id == kAVX512, id == kAVX2
	return func() { useAVX512, useAVX2 = avx512, avx2 }
}
