package digest

import (
	"bytes"
	"errors"
	"fmt"
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
func (s *Sum) AppendHex(dst []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range s.b[:s.Len()] {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// String returns the lower-case hexadecimal digest, as md5sum prints it.
func (s Sum) String() string {
	var buf [2 * MaxSize]byte
	return string(s.AppendHex(buf[:0]))
}

// Equal reports whether s and t hold the same algorithm and digest.
func (s *Sum) Equal(t Sum) bool {
	return s.alg == t.alg && s.b == t.b
}

// MatchHex reports whether hex, in either case, is exactly the
// hexadecimal form of s. It allocates nothing.
func (s *Sum) MatchHex(hex []byte) bool {
	n := s.Len()
	if n == 0 || len(hex) != 2*n {
		return false
	}
	for i := 0; i < n; i++ {
		hi, ok1 := unhex(hex[2*i])
		lo, ok2 := unhex(hex[2*i+1])
		if !ok1 || !ok2 || hi<<4|lo != s.b[i] {
			return false
		}
	}
	return true
}

// ParseSum parses a hexadecimal digest (either case) of algorithm a.
func ParseSum(a Algorithm, hex string) (Sum, error) {
	if !a.Valid() {
		return Sum{}, fmt.Errorf("%w %d", ErrUnknownAlgorithm, uint8(a))
	}
	if len(hex) != 2*a.Size() {
		return Sum{}, fmt.Errorf("%w: %s digest needs %d hex digits, got %d", ErrMalformedSum, a, 2*a.Size(), len(hex))
	}
	s := Sum{alg: a}
	for i := range a.Size() {
		hi, ok1 := unhex(hex[2*i])
		lo, ok2 := unhex(hex[2*i+1])
		if !ok1 || !ok2 {
			return Sum{}, fmt.Errorf("%w: %q", ErrMalformedSum, hex)
		}
		s.b[i] = hi<<4 | lo
	}
	return s, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
