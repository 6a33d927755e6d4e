package digest

import "sync"

// bufferSize is the size of every read. It was chosen by measurement
// (BenchmarkReadSize in this package): hashing from the page cache gets
// faster up to 32-64 KiB reads and is flat beyond, so 128 KiB sits on the
// plateau with a margin, keeps the syscall count low, is a multiple of
// md5-simd's 32 KiB block, and still fits L2 next to the hash state.
const bufferSize = 128 << 10

type buffer [bufferSize]byte

// buffers holds read buffers, so that hashing allocates no buffer per
// file or per call once the pool is warm.
var buffers = sync.Pool{New: func() any { return new(buffer) }}

func getBuffer() *buffer  { return buffers.Get().(*buffer) }
func putBuffer(b *buffer) { buffers.Put(b) }
