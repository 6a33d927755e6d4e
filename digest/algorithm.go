package digest

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// An Algorithm names a hash function.
type Algorithm uint8

// The supported algorithms. MD5 and SHA-1 are broken for collision
// resistance; they remain here for integrity checks against existing
// checksum files.
const (
	MD5 Algorithm = iota + 1
	SHA1
	SHA224
	SHA256
	SHA384
	SHA512
	numAlgorithms
)

// MaxSize is the largest digest size in bytes of any Algorithm.
const MaxSize = sha512.Size

// ErrUnknownAlgorithm is returned (wrapped) for an algorithm name or value
// this package does not support.
var ErrUnknownAlgorithm = errors.New("digest: unknown algorithm")

type algInfo struct {
	name string // lower-case name, as accepted by ParseAlgorithm
	tag  string // the coreutils --tag label, e.g. "SHA256"
	size int
	new  func() hash.Hash
	pool sync.Pool // of hash.Hash, reset before use
}

var algs = [numAlgorithms]algInfo{
	MD5:    {name: "md5", tag: "MD5", size: md5.Size, new: md5.New},
	SHA1:   {name: "sha1", tag: "SHA1", size: sha1.Size, new: sha1.New},
	SHA224: {name: "sha224", tag: "SHA224", size: sha256.Size224, new: sha256.New224},
	SHA256: {name: "sha256", tag: "SHA256", size: sha256.Size, new: sha256.New},
	SHA384: {name: "sha384", tag: "SHA384", size: sha512.Size384, new: sha512.New384},
	SHA512: {name: "sha512", tag: "SHA512", size: sha512.Size, new: sha512.New},
}

// Algorithms returns every supported algorithm, in a fixed order.
func Algorithms() []Algorithm {
	out := make([]Algorithm, 0, numAlgorithms-1)
	for a := MD5; a < numAlgorithms; a++ {
		out = append(out, a)
	}
	return out
}

// Valid reports whether a is a supported algorithm.
func (a Algorithm) Valid() bool { return a >= MD5 && a < numAlgorithms }

// String returns the lower-case name of a ("md5", "sha256", ...).
func (a Algorithm) String() string {
	if !a.Valid() {
		return fmt.Sprintf("Algorithm(%d)", uint8(a))
	}
	return algs[a].name
}

// Tag returns the label coreutils prints for a in BSD-style (--tag)
// output: "MD5", "SHA1", "SHA224", "SHA256", "SHA384" or "SHA512".
func (a Algorithm) Tag() string {
	if !a.Valid() {
		return ""
	}
	return algs[a].tag
}

// Size returns the digest size of a in bytes, or 0 for an invalid a.
func (a Algorithm) Size() int {
	if !a.Valid() {
		return 0
	}
	return algs[a].size
}

// New returns a new hash.Hash computing a, or nil for an invalid a.
func (a Algorithm) New() hash.Hash {
	if !a.Valid() {
		return nil
	}
	return algs[a].new()
}

// ParseAlgorithm returns the Algorithm named name. It accepts the names
// String returns and the coreutils tags ("SHA256"), in any case, and the
// command names ("sha256sum"). Otherwise it returns an error wrapping
// ErrUnknownAlgorithm.
func ParseAlgorithm(name string) (Algorithm, error) {
	n := strings.TrimSuffix(strings.ToLower(name), "sum")
	for a := MD5; a < numAlgorithms; a++ {
		if n == algs[a].name {
			return a, nil
		}
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownAlgorithm, name)
}

// getHash returns a reset hash for a from a pool; putHash returns it.
func getHash(a Algorithm) hash.Hash {
	if h, ok := algs[a].pool.Get().(hash.Hash); ok {
		h.Reset()
		return h
	}
	return algs[a].new()
}

func putHash(a Algorithm, h hash.Hash) { algs[a].pool.Put(h) }
