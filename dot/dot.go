// Package dot implements the dot-stuffing codec of SMTP DATA, NNTP articles,
// POP3 and LMTP: the framing in which a data block is a sequence of lines
// ending with a line holding only ".", and lines that begin with "." carry an
// extra ".".
//
// [Decoder] and [Encoder] are incremental, I/O-free state machines over byte
// slices with the contract of golang.org/x/text/transform.Transformer: they
// can stop and resume at any byte boundary, never allocate, and can be driven
// by a blocking reader, a writer or an event loop alike. Package
// github.com/wirespeed/wirespeed/textproto builds its DotReader and DotWriter
// on them.
//
// A Decoder stops at the end marker, but transform.NewReader reads its source
// ahead, in chunks: the bytes after the end marker (in SMTP, the next command)
// are read with the block and lost. To read on after a block, decode from
// bytes the caller keeps, such as a bufio.Reader's buffer through Peek and
// Discard, as textproto's DotReader does.
//
// # Modes
//
// [Compat] reproduces net/textproto exactly, quirks included: on decode,
// "\r\n" becomes "\n", a bare "\r" is kept, both ".\r\n" and ".\n" end the
// data, and a bare "\n" also ends a line; on encode, "\n" becomes "\r\n" and
// leading dots are doubled.
//
// [Strict] follows RFC 5321 §4.1.1.4 and §2.3.8: lines end only in "\r\n"
// and only "\r\n.\r\n" ends the data. By default a bare CR or bare LF
// anywhere is an error (a [*SyntaxError] naming its offset), so sequences
// such as "\n.\n" or "\r\n.\r" cannot end a message early: this is the
// mode that is immune to SMTP smuggling (CVE-2023-51764 and its family).
// Decoded lines end in "\n". The Strict encoder takes "\r\n"-terminated
// lines and refuses bare CR or LF in its input instead of inventing line
// breaks.
//
// [Raw] frames exactly like Strict, but decoded output keeps the "\r\n" line
// endings as they were on the wire: what servers that store messages
// verbatim need. The Raw encoder is the Strict encoder.
//
// # Bare CR and LF
//
// A Strict or Raw [Decoder]'s Bare field says what it does with a bare CR
// or LF, one that is not part of a CRLF:
//   - [BareReject], the default, rejects the block with a [*SyntaxError].
//   - [BareKeep] keeps the byte as data, as go-smtp's server does. It ends
//     no line, so a "." after a bare LF does not start a line: it is data,
//     neither a stuffed dot nor an end marker.
//   - [BareNormalize] takes a bare LF for a line ending and writes the
//     mode's line ending for it ("\n" in Strict, "\r\n" in Raw), as Postfix
//     does with smtpd_forbid_bare_newline = normalize. A bare CR is kept
//     as data, as Postfix keeps it. The line after a bare LF is a line like
//     any other, so a leading dot on it is a stuffed one, but it cannot end
//     the data: only a CRLF, ".", CRLF does, as Postfix requires. ".\r\n"
//     after a bare LF, and ".\n" after anything, are a stuffed dot and an
//     empty line.
//
// Under every policy "\r\n.\r\n" is the only end marker (and ".\r\n" at
// the start of the data), so none of them opens the data to smuggling; a
// line that starts with "." and is not the end marker loses the dot,
// whatever follows it. "a\r\r\n.\r\n" is a line "a\r" (or an error) and
// the end marker under every policy.
//
// # Errors in the data
//
// A decoder reports problems with the data itself (a block larger than
// [Decoder.MaxSize], a line longer than [Decoder.MaxLine], a bare CR or LF
// under [BareReject]) only after it has consumed the rest of the block,
// terminator included, in place of [io.EOF]. Output stops at the first
// problem, but the input stays in step, so a server can reply (SMTP 552 or
// 550) and read the next command. Every error a Decoder returns other than
// [ErrShortDst] therefore means the block has ended, or the input ended
// early ([io.ErrUnexpectedEOF]).
//
// The decoder reads the whole block for problems, not only up to the first.
// If it found one kind of problem, it returns that kind's error:
// [ErrTooLarge], [ErrLineTooLong], or a [*SyntaxError] for the first bare
// LF or the first bare CR. If it found several kinds, its error matches
// each of them with errors.Is (and errors.As finds the *SyntaxErrors), and
// its text names them in order of precedence: ErrTooLarge first (servers
// answer 552 to a message too large before they look at its content), then
// ErrLineTooLong, then a bare LF, then a bare CR.
//
// An encoder reports a bare CR or LF as soon as it sees it and stays failed:
// the stream it was writing cannot be finished safely.
//
// # Text that is not dot-encoded
//
// [LineState.Clean] checks CRLF text that is not dot-encoded, such as the
// data of BDAT chunks (RFC 3030), for the line rules of Strict mode (no
// bare CR or LF, no line past a limit), piece by piece, with the same
// kernels.
//
// # Kernels
//
// The work is done by one of three kernels, chosen once at start-up from
// the CPU's features ([Kernel] names it): AVX-512 (VBMI2 and BW), AVX2, or
// the pure-Go reference, which the purego build tag forces. All three give
// the same results for every input and every way of splitting it (the
// tests and fuzz targets run each against the pure-Go one). None allocates
// or touches memory outside src and dst, though Transform may use all of
// dst as scratch space; an assembly call handles at most 64 KiB, so a
// goroutine in a long Transform can still be preempted.
package dot

import (
	"errors"
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
	BareReject    BarePolicy = iota // the zero value: today's behaviour, a *SyntaxError after the block
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
