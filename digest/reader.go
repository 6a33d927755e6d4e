package digest

import (
	"fmt"
	"hash"
	"io"
	"os"
)

// Reader returns the digest of everything r yields up to io.EOF. It reads
// through a pooled buffer and allocates nothing per call once warm.
// A read error other than io.EOF itself is returned as is, with a zero
// Sum: one that wraps io.EOF too, as io.Copy has it. A nil r, or an r
// whose Read returns a count outside 0 to len(p), is an error matching
// os.ErrInvalid.
func Reader(a Algorithm, r io.Reader) (Sum, error) {
	if !a.Valid() {
		return Sum{}, fmt.Errorf("%w %d", ErrUnknownAlgorithm, uint8(a))
	}
	if r == nil {
		return Sum{}, fmt.Errorf("digest: nil reader: %w", os.ErrInvalid)
	}
	buf := getBuffer()
	defer putBuffer(buf)
	h := getHash(a)
	defer putHash(a, h)
	for {
		n, err := r.Read(buf[:])
		if n < 0 || n > len(buf) {
			return Sum{}, fmt.Errorf("digest: Read returned %d bytes of %d: %w", n, len(buf), errInvalidRead)
		}
		if n > 0 {
			h.Write(buf[:n])
		}
		// io.EOF itself, not an error wrapping it, as io.Copy has it:
		// the io.Reader contract ends the data with io.EOF.
		if err == io.EOF {
			break
		}
		if err != nil {
			return Sum{}, err
		}
	}
	return finish(a, h, buf[:]), nil
}

// errInvalidRead is Reader's error for a Read that returned a negative
// count or more than it was given room for, which io.Reader forbids.
var errInvalidRead = fmt.Errorf("invalid count from io.Reader: %w", os.ErrInvalid)

// File returns the digest of the named file. It never reads the whole
// file into memory: it streams it through a pooled buffer, with one read
// system call per 128 KiB. Errors are *fs.PathError values, so
// errors.Is(err, fs.ErrNotExist) and the like work; a directory fails
// with an error wrapping syscall.EISDIR, as read(2) reports it.
func File(a Algorithm, path string) (Sum, error) {
	if !a.Valid() {
		return Sum{}, fmt.Errorf("%w %d", ErrUnknownAlgorithm, uint8(a))
	}
	buf := getBuffer()
	defer putBuffer(buf)
	h := getHash(a)
	defer putHash(a, h)
	var s Sum
	_, err := hashFile(a, h, path, buf[:], nil, nil, nil, &s)
	return s, err
}

// finish returns the digest h has computed. h.Sum goes through an
// interface, so its argument escapes: the pooled buffer serves as scratch
// space to keep the Sum itself off the heap.
func finish(a Algorithm, h hash.Hash, scratch []byte) Sum {
	s := Sum{alg: a}
	copy(s.b[:], h.Sum(scratch[:0]))
	return s
}

// progress receives the number of bytes of each read; nil ignores them.
type progress interface{ Add(int64) int64 }

// hashFile streams path into h (already reset) and stores the digest in
// *s. It returns the number of bytes hashed. A non-nil c is polled before
// every read; fds, if not nil, counts the file open.
func hashFile(a Algorithm, h hash.Hash, path string, buf []byte, p progress, c *canceller, fds *descriptors, s *Sum) (int64, error) {
	f, err := fds.openFile(path)
	if err != nil {
		return 0, err
	}
	defer fds.close(f)
	var size int64
	for {
		if err := c.check("read", path); err != nil {
			return size, err
		}
		n, err := f.read(path, buf)
		if err != nil {
			return size, err
		}
		if n == 0 {
			break
		}
		h.Write(buf[:n])
		size += int64(n)
		if p != nil {
			p.Add(int64(n))
		}
	}
	*s = finish(a, h, buf)
	return size, nil
}
