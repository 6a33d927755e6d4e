//go:build amd64 && gc && !purego

package digest

import (
	"hash"

	md5simd "github.com/minio/md5-simd"
	"golang.org/x/sys/cpu"
)

const simdLanes = md5simd.Lanes

var simdISA = func() string {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ:
		return "avx512"
	case cpu.X86.HasAVX2:
		return "avx2"
	}
	return ""
}()

func newSIMDServer() *simdServer {
	srv := md5simd.NewServer()
	s := &simdServer{free: make(chan hash.Hash, simdLanes)}
	for range simdLanes {
		s.free <- srv.NewHash()
	}
	return s
}
