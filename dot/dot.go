// Package dot implements the dot-stuffing codec of SMTP DATA, NNTP
// articles, POP3 and LMTP, in which a data block is lines ending with a
// line holding only ".", and lines that begin with "." carry an extra ".".
// [Decoder] and [Encoder] are incremental, I/O-free state machines with the
// contract of golang.org/x/text/transform.Transformer: they stop and resume
// at any byte, allocate nothing but the error of a block they reject,
// and suit a blocking reader, a writer or an event loop alike (see the
// examples of [Decoder.Transform] and [LineState.Clean]). Package
// github.com/wirespeed/wirespeed/textproto builds its DotReader and
// DotWriter on them.
//
// Modes: [Compat] is net/textproto exactly, quirks included. [Strict] is
// RFC 5321: lines end only in "\r\n", only "\r\n.\r\n" ends the data,
// and a bare CR or LF is a [*SyntaxError] naming its offset, so "\n.\n" and
// the rest of the SMTP smuggling family (CVE-2023-51764) cannot end a
// message early. [Raw] frames as Strict and keeps the "\r\n" line endings.
// In Strict and Raw, [Decoder.Bare] may instead keep a bare CR or LF as data
// ([BareKeep], as go-smtp does) or take a bare LF for a line end
// ([BareNormalize], as Postfix can); under every policy only "\r\n.\r\n"
// ends the data.
//
// Guarantees:
//   - A decoder reports problems with the data (over [Decoder.MaxSize], a
//     line over [Decoder.MaxLine], a bare CR or LF) only once it has
//     consumed the whole block, end line included, so a server can reply
//     and read the next command. The error matches every kind found with
//     errors.Is, and leads with the one a server answers first:
//     [ErrTooLarge], then [ErrLineTooLong], a bare LF, a bare CR.
//   - An encoder reports a bare CR or LF at once and stays failed.
//   - The kernels, AVX-512, AVX2 or pure Go (chosen at start-up, named by
//     [Kernel]; the purego build tag forces pure Go), give the same results
//     for every input and every way of splitting it, and touch no memory
//     outside src and dst.
//
// transform.NewReader reads ahead: the bytes after a block (in SMTP, the
// next command) are lost through it. [LineState.Clean] checks text that is
// not dot-encoded (BDAT chunks) for the same line rules. The repository's
// docs/textproto.md tells the rules in full.
package dot

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/text/transform"
)

// Mode selects the dialect of a [Decoder] or [Encoder].
type Mode uint8

const (
	Compat Mode = iota // exactly net/textproto's behaviour
	Strict             // RFC 5321: CRLF only (see BarePolicy for bare CR/LF), LF output
	Raw                // Strict framing, CRLF kept in decoded output
)

// BarePolicy says what a Strict or Raw Decoder does with a bare CR or LF.
type BarePolicy uint8

const (
	BareReject    BarePolicy = iota // the zero value: a *SyntaxError after the block
	BareKeep                        // keep the byte as data; it ends no line
	BareNormalize                   // treat it as a line ending: "\r\n" in Raw output, "\n" in Strict output (a bare LF; a bare CR is kept)
)

func (p BarePolicy) String() string {
	switch p {
	case BareReject:
		return "reject"
	case BareKeep:
		return "keep"
	case BareNormalize:
		return "normalize"
	}
	return "BarePolicy(" + strconv.Itoa(int(p)) + ")"
}

// ErrMode is what a Decoder or Encoder whose Mode (or Bare) is none of
// the constants returns from every call, matched with errors.Is.
var ErrMode = errors.New("dot: unknown mode or bare policy")

func errMode(m Mode, p BarePolicy) error {
	return fmt.Errorf("%w (%v, %v)", ErrMode, m, p)
}

func (m Mode) String() string {
	switch m {
	case Compat:
		return "compat"
	case Strict:
		return "strict"
	case Raw:
		return "raw"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Transformer errors, shared with golang.org/x/text/transform so that a
// Decoder or Encoder works with transform.NewReader and transform.NewWriter.
var (
	// ErrShortDst means dst was too short to make progress; call again with
	// more room, passing the unconsumed input.
	ErrShortDst = transform.ErrShortDst
	// ErrShortSrc is part of the Transformer contract; Decoder and Encoder
	// never return it, because they keep partial state themselves.
	ErrShortSrc = transform.ErrShortSrc
)

var _ error = (*SyntaxError)(nil)

var (
	// ErrTooLarge reports a block whose decoded size exceeds the
	// decoder's MaxSize.
	ErrTooLarge = errors.New("dot: data too large")
	// ErrLineTooLong reports a line longer than the decoder's MaxLine.
	ErrLineTooLong = errors.New("dot: line too long")
	// ErrBareCR reports a CR not followed by LF (Strict and Raw modes,
	// BareReject).
	ErrBareCR = errors.New("dot: bare CR")
	// ErrBareLF reports an LF not preceded by CR (Strict and Raw modes,
	// BareReject).
	ErrBareLF = errors.New("dot: bare LF")
	// ErrClosed reports input passed to an Encoder after it wrote the end
	// marker.
	ErrClosed = errors.New("dot: write after end of data")
)

// A SyntaxError reports a bare CR or LF and where it was. It matches
// ErrBareCR or ErrBareLF with errors.Is.
type SyntaxError struct {
	Offset int64 // offset of the offending byte in the encoded (decoder) or plain (encoder) input
	Err    error // ErrBareCR or ErrBareLF
}

func (e *SyntaxError) Error() string {
	return e.Err.Error() + " at offset " + strconv.FormatInt(e.Offset, 10)
}

func (e *SyntaxError) Unwrap() error { return e.Err }
