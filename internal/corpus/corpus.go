// Package corpus generates the deterministic inputs that wirespeed's tests,
// benchmarks and `wirespeed bench` share, so every number comes from the
// same bytes.
package corpus

import (
	"bytes"
	"math/rand/v2"
)

// Size is the default corpus size: 4 MiB, as in golang/go#56047.
const Size = 4 << 20

// seed fixes the generated corpora across runs and machines.
const seed = 56047

func rng() *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// Mail returns about n bytes of CRLF-terminated lines of 20–78 random
// lowercase letters; one line in 50 starts with '.'. It is the decoded
// (unstuffed) form: use it as DotWriter input, or dot-encode it for a
// DotReader.
func Mail(n int) []byte {
	r := rng()
	b := make([]byte, 0, n+80)
	for len(b) < n {
		l := 20 + r.IntN(59)
		start := len(b)
		for i := 0; i < l; i++ {
			b = append(b, byte('a'+r.IntN(26)))
		}
		if r.IntN(50) == 0 {
			b[start] = '.'
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// LongLine returns one line of n-2 random lowercase letters and CRLF.
func LongLine(n int) []byte {
	r := rng()
	b := make([]byte, n)
	for i := range b[:n-2] {
		b[i] = byte('a' + r.IntN(26))
	}
	b[n-2], b[n-1] = '\r', '\n'
	return b
}

// Tiny returns about n bytes of empty lines ("\r\n") and one-letter lines,
// the worst case for per-line overhead.
func Tiny(n int) []byte {
	r := rng()
	b := make([]byte, 0, n+3)
	for len(b) < n {
		if r.IntN(2) == 0 {
			b = append(b, byte('a'+r.IntN(26)))
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// Base64 returns about n bytes of 76-character base64-alphabet lines with
// CRLF, as in MIME bodies.
func Base64(n int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	r := rng()
	b := make([]byte, 0, n+80)
	for len(b) < n {
		for i := 0; i < 76; i++ {
			b = append(b, alphabet[r.IntN(64)])
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// Binary returns about n bytes of 128-byte lines of random bytes other
// than CR and LF (yEnc-style 8-bit text), each ending in CRLF; lines may
// start with '.'.
func Binary(n int) []byte {
	r := rng()
	b := make([]byte, 0, n+130)
	for len(b) < n {
		for i := 0; i < 128; i++ {
			c := byte(r.IntN(256))
			for c == '\r' || c == '\n' {
				c = byte(r.IntN(256))
			}
			b = append(b, c)
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// Dots returns n bytes of '.', the seed benchmark of golang/go#56047.
func Dots(n int) []byte { return bytes.Repeat([]byte("."), n) }

// Header returns a MIME header block of about n bytes: realistic mail
// header fields (some folded over several lines), then the empty line that
// ends the block.
func Header(n int) []byte {
	keys := []string{"Received", "Message-ID", "Date", "From", "To", "Subject", "Content-Type",
		"DKIM-Signature", "X-Mailer", "MIME-Version", "Return-Path", "x-custom-header"}
	r := rng()
	b := make([]byte, 0, n+200)
	for len(b) < n {
		b = append(b, keys[r.IntN(len(keys))]...)
		b = append(b, ": "...)
		folds := r.IntN(3)
		for f := 0; f <= folds; f++ {
			if f > 0 {
				b = append(b, "\r\n\t"...)
			}
			l := 10 + r.IntN(60)
			for i := 0; i < l; i++ {
				c := byte('a' + r.IntN(26))
				if r.IntN(8) == 0 {
					c = ' '
				}
				b = append(b, c)
			}
		}
		b = append(b, '\r', '\n')
	}
	return append(b, '\r', '\n')
}
