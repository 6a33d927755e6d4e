// Package digest hashes files and readers the fast way: MD5, SHA-1,
// SHA-224, SHA-256, SHA-384 and SHA-512, one file or many in parallel.
//
// # Guarantees
//
//   - Results are the standard library's: every digest equals what
//     crypto/md5, crypto/sha1, crypto/sha256 or crypto/sha512 compute over
//     the same bytes, whichever path computed it (tested on every size
//     around block and buffer boundaries, and on batches).
//   - Files are streamed, never read whole: one read(2) per 128 KiB into a
//     pooled buffer (the size was chosen by measurement, see
//     BenchmarkReadSize), hashed in place. Buffers and hash states are
//     pooled, and a Sum is a fixed-size value, so File and Reader allocate
//     at most the NUL-terminated path for open(2), and the many-files path
//     at most 2 allocations per file, batch setup included (tested with
//     testing.AllocsPerRun).
//   - Files and Each hash with at most Options.Workers cores busy and
//     deliver results in input order, with a bounded window of files in
//     flight, so memory does not grow with the number of paths.
//   - Errors are per file and never stop a batch. They are *fs.PathError
//     values wrapping the system error, so errors.Is(err,
//     fs.ErrNotExist), fs.ErrPermission or syscall.EISDIR work. Bad
//     arguments give errors wrapping ErrUnknownAlgorithm or
//     ErrMalformedSum; nothing panics on bad input.
//   - Cancelling the context stops a batch between reads; files in
//     flight then report an error wrapping the context's error.
//
// # Multi-buffer MD5
//
// MD5 cannot be parallelised within one stream, but several streams can
// share one core: on amd64 with AVX2 or AVX-512, Files and Each hash MD5
// through github.com/minio/md5-simd, 16 files per core at once, which on
// many files is several times the throughput of crypto/md5. It is used
// only where it wins: batches of at least 8 files per worker, and files
// of 128 KiB or more (smaller ones go to crypto/md5). Result.MultiBuffer
// tells which path a file took; MultiBuffer names the instruction set.
// The SIMD servers are started on first use and kept for the life of the
// process (one goroutine and about 1.5 MiB of buffers per core), so later
// batches pay nothing to start them. The purego build tag, or any other
// platform, keeps every hash on the standard library.
//
// # Limits
//
//   - A read blocked on a FIFO or a slow device is not interrupted by
//     cancellation.
//   - On Linux, the BSDs and macOS files are read through raw file
//     descriptors (syscall.Open), which saves os.File's allocations;
//     elsewhere os.File is used.
//   - MD5 and SHA-1 are broken for collision resistance; they are here to
//     check existing checksums, not to authenticate anything.
package digest
