//go:build !amd64 || !gc || purego

package digest

const simdLanes = 16

// simdISA is empty: the purego build tag, or a platform md5-simd does not
// accelerate, keeps every hash on the standard library.
const simdISA = ""

func newSIMDServer() *simdServer { panic("digest: no multi-buffer MD5 in this build") }
