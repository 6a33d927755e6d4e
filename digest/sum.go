package digest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
)

var (
	_ fmt.Stringer = Sum{}
	_ fmt.Stringer = Algorithm(0)
)

// A Sum is a computed digest. It is a value type of fixed size, so
// producing one allocates nothing. The zero Sum has no algorithm and no
// bytes.
type Sum struct {
	alg Algorithm
	b   [MaxSize]byte
}

// ErrMalformedSum is returned (wrapped) by ParseSum for text that is not
// a hexadecimal digest of the algorithm's size.
var ErrMalformedSum = errors.New("digest: malformed hexadecimal digest")

// Algorithm returns the algorithm that computed s.
func (s *Sum) Algorithm() Algorithm { return s.alg }

// Len returns the digest size in bytes (0 for the zero Sum).
func (s *Sum) Len() int { return s.alg.Size() }

// Bytes returns a copy of the digest bytes.
func (s *Sum) Bytes() []byte { return bytes.Clone(s.b[:s.Len()]) }

// AppendHex appends the lower-case hexadecimal digest to dst.
func (s *Sum) AppendHex(dst []byte) []byte { return hex.AppendEncode(dst, s.b[:s.Len()]) }

// String returns the lower-case hexadecimal digest, as md5sum prints it.
func (s Sum) String() string {
	var buf [2 * MaxSize]byte
	return string(s.AppendHex(buf[:0]))
}

// Equal reports whether s and t hold the same algorithm and digest.
func (s *Sum) Equal(t Sum) bool {
	return s.alg == t.alg && s.b == t.b
}

// MatchHex reports whether text, in either case, is exactly the
// hexadecimal form of s. It allocates nothing.
func (s *Sum) MatchHex(text []byte) bool {
	n := s.Len()
	if n == 0 || len(text) != 2*n {
		return false
	}
	var b [MaxSize]byte
	_, err := hex.Decode(b[:n], text)
	return err == nil && bytes.Equal(b[:n], s.b[:n])
}

// ParseSum parses a hexadecimal digest (either case) of algorithm a.
func ParseSum(a Algorithm, text string) (Sum, error) {
	if !a.Valid() {
		return Sum{}, fmt.Errorf("%w %d", ErrUnknownAlgorithm, uint8(a))
	}
	if len(text) != 2*a.Size() {
		return Sum{}, fmt.Errorf("%w: %s digest needs %d hex digits, got %d", ErrMalformedSum, a, 2*a.Size(), len(text))
	}
	s := Sum{alg: a}
	if _, err := hex.Decode(s.b[:a.Size()], []byte(text)); err != nil {
		return Sum{}, fmt.Errorf("%w: %q", ErrMalformedSum, text)
	}
	return s, nil
}
