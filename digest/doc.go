// Package digest hashes files and readers with MD5, SHA-1, SHA-224,
// SHA-256, SHA-384 and SHA-512, one file or many in parallel. See the
// examples of [File] and [Files].
//
// Guarantees:
//   - Every digest equals what crypto/md5, crypto/sha1, crypto/sha256 or
//     crypto/sha512 compute over the same bytes, whichever path computed
//     it.
//   - Files are streamed through pooled 128 KiB buffers, never read whole.
//     File and Reader allocate at most the path for open(2); Files and
//     Each about once per file (that path), and per batch a few dozen
//     times plus about once per worker started: a batch starts no more
//     workers than it has paths (nor than Options.Workers).
//   - Files and Each hash at most Options.Workers files at once, on as
//     many cores, or with multi-buffer MD5 up to 16 files per SIMD server
//     (see Options.Workers); they deliver results in input order, and
//     hold a bounded window of files, however many paths there are. Out
//     of file descriptors (EMFILE, ENFILE), a file waits for another of
//     the batch to close; it fails only when none of the batch's files is
//     open.
//   - Errors are per file and never stop a batch: *fs.PathError values
//     wrapping the system error, so errors.Is(err, fs.ErrNotExist) works.
//     Bad arguments give errors wrapping ErrUnknownAlgorithm or
//     ErrMalformedSum; nothing panics on bad input.
//   - Cancelling the context stops a batch between reads; files in flight
//     then report an error wrapping the context's error.
//
// Multi-buffer MD5: on amd64 with AVX2 or AVX-512, Files and Each hash MD5
// batches through github.com/minio/md5-simd, up to 16 files per core at
// once, where that wins: batches of at least 8 files per worker, files of
// 128 KiB or more. Result.MultiBuffer tells which path a file took. The
// SIMD servers start on first use and live for the process (one goroutine
// and about 1.5 MiB per core). The purego build tag, or another platform,
// keeps every hash on the standard library.
//
// Limits: a read blocked on a FIFO or slow device is not interrupted by
// cancellation. MD5 and SHA-1 are broken for collision resistance; they are
// here to check existing checksums, not to authenticate anything.
package digest
