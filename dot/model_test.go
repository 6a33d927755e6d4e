package dot

import (
	"errors"
	"io"
	"strings"
)

// A naive model of decoding, written from the package documentation and
// independent of the kernels: it sees the whole input at once and decides
// each byte by looking ahead, one byte at a time, with no runs, no fast
// paths and no partial state. It is the oracle for Strict and Raw mode with
// every BarePolicy, and for every mode with MaxSize and MaxLine (Compat mode
// without limits is checked against net/textproto itself, and so is this
// model).

// modelConfig is what a Decoder is set up with.
type modelConfig struct {
	mode    Mode
	bare    BarePolicy
	maxSize int64
	maxLine int
}

func (c modelConfig) decoder() *Decoder {
	return &Decoder{Mode: c.mode, Bare: c.bare, MaxSize: c.maxSize, MaxLine: c.maxLine}
}

// modelState collects the output and the problems of one block.
type modelState struct {
	cfg      modelConfig
	out      []byte
	size     int64 // decoded size, output or not
	line     int   // bytes of the current line
	tooLarge bool
	tooLong  bool
	lfOff    int64 // first bare LF, or -1
	crOff    int64 // first bare CR, or -1
}

func (m *modelState) failed() bool {
	return m.tooLarge || m.tooLong || m.lfOff >= 0 || m.crOff >= 0
}

// put is decoded output. It is kept unless a problem was found before it,
// or it takes the block past MaxSize.
func (m *modelState) put(s string) {
	m.size += int64(len(s))
	if m.cfg.maxSize > 0 && m.size > m.cfg.maxSize {
		m.tooLarge = true
	}
	if !m.failed() {
		m.out = append(m.out, s...)
	}
}

// lineByte counts a byte of the current line, before its output if any.
func (m *modelState) lineByte() {
	m.line++
	if m.cfg.maxLine > 0 && m.line > m.cfg.maxLine {
		m.tooLong = true
	}
}

// lineEnd is a line ending, written as s.
func (m *modelState) lineEnd(s string) {
	m.put(s)
	m.line = 0
}

// result is the outcome: the block ended after consumed bytes (or, if
// !ended, the input ended first).
func (m *modelState) result(consumed int, ended bool) decResult {
	if !ended {
		return decResult{m.out, consumed, io.ErrUnexpectedEOF}
	}
	var errs wantErrs
	if m.tooLarge {
		errs = append(errs, ErrTooLarge)
	}
	if m.tooLong {
		errs = append(errs, ErrLineTooLong)
	}
	if m.lfOff >= 0 {
		errs = append(errs, &SyntaxError{Offset: m.lfOff, Err: ErrBareLF})
	}
	if m.crOff >= 0 {
		errs = append(errs, &SyntaxError{Offset: m.crOff, Err: ErrBareCR})
	}
	switch len(errs) {
	case 0:
		return decResult{m.out, consumed, io.EOF}
	case 1:
		return decResult{m.out, consumed, errs[0]}
	}
	return decResult{m.out, consumed, errs}
}

// modelDecode decodes one block from the start of in.
func modelDecode(cfg modelConfig, in []byte) decResult {
	m := &modelState{cfg: cfg, lfOff: -1, crOff: -1}
	if cfg.mode == Compat {
		return modelCompat(m, in)
	}
	ending := "\n"
	if cfg.mode == Raw {
		ending = "\r\n"
	}
	at := func(i int) int { // in[i], or -1 past the end
		if i < len(in) {
			return int(in[i])
		}
		return -1
	}
	bol := true   // at the start of a line
	soft := false // ... that a bare LF taken as a line ending began
	for i := 0; i < len(in); {
		c := in[i]
		if bol && c == '.' {
			if !soft && at(i+1) == '\r' && at(i+2) == '\n' {
				return m.result(i+3, true)
			}
			m.lineByte() // a stuffed dot: on the wire, not in the output
			bol = false
			i++
			continue
		}
		switch {
		case c == '\r' && at(i+1) == '\n':
			m.lineEnd(ending)
			bol, soft = true, false
			i += 2
		case c == '\r' && at(i+1) < 0:
			// Undecided at the end of the input: the block is cut.
			return m.result(len(in), false)
		case c == '\r': // bare
			m.lineByte()
			if cfg.bare == BareReject && m.crOff < 0 {
				m.crOff = int64(i)
			}
			m.put("\r") // rejected, it counts toward MaxSize all the same
			bol = false
			i++
		case c == '\n': // bare
			switch cfg.bare {
			case BareReject:
				m.lineByte()
				if m.lfOff < 0 {
					m.lfOff = int64(i)
				}
				m.put("\n") // rejected, it counts toward MaxSize all the same
				bol = false
			case BareKeep:
				m.lineByte()
				m.put("\n")
				bol = false
			case BareNormalize:
				m.lineEnd(ending)
				bol, soft = true, true
			}
			i++
		default:
			m.lineByte()
			m.put(string([]byte{c}))
			bol = false
			i++
		}
	}
	return m.result(len(in), false)
}

// modelCompat is net/textproto's DotReader, one byte at a time, with the
// limits added: a line ends at an LF, and a CR right before it is part of
// the line ending.
func modelCompat(m *modelState, in []byte) decResult {
	const (
		beginLine = iota
		dot
		dotCR
		cr
		data
	)
	state := beginLine
	for i := 0; i < len(in); {
		c := in[i]
		i++
		switch state {
		case beginLine:
			switch c {
			case '.':
				m.lineByte()
				state = dot
				continue
			case '\r':
				state = cr
				continue
			case '\n': // written, and what follows is not a line start
				m.lineEnd("\n")
				state = data
				continue
			}
			state = data
		case dot:
			switch c {
			case '\r':
				state = dotCR
				continue
			case '\n':
				return m.result(i, true)
			}
			state = data
		case dotCR:
			if c == '\n' {
				return m.result(i, true)
			}
			// The CR is data, and c is read again.
			i--
			c = '\r'
			state = data
		case cr:
			if c == '\n' {
				m.lineEnd("\n")
				state = beginLine
				continue
			}
			i--
			c = '\r'
			state = data
		case data:
			switch c {
			case '\r':
				state = cr
				continue
			case '\n':
				m.lineEnd("\n")
				state = beginLine
				continue
			}
		}
		m.lineByte()
		m.put(string([]byte{c}))
	}
	return m.result(len(in), false)
}

// wantErrs is the error the model expects for several problems: an error
// that matches each of them, with their texts in this order.
type wantErrs []error

func (w wantErrs) Unwrap() []error { return w }

func (w wantErrs) Error() string {
	var s []string
	for _, e := range w {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

// sameErr reports whether a and b are the same error as far as a caller
// can tell: the same sentinel, equal *SyntaxErrors, or for several problems
// the same text and the same errors behind it.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if _, ok := b.(wantErrs); ok {
		a, b = b, a
	}
	if w, ok := a.(wantErrs); ok {
		u, ok := b.(interface{ Unwrap() []error })
		if !ok || b.Error() != w.Error() {
			return false
		}
		got := u.Unwrap()
		if len(got) != len(w) {
			return false
		}
		for i := range w {
			kind := w[i]
			if se, ok := kind.(*SyntaxError); ok {
				kind = se.Err
			}
			if !sameErr(w[i], got[i]) || !errors.Is(b, kind) {
				return false
			}
		}
		return true
	}
	sa, okA := a.(*SyntaxError)
	sb, okB := b.(*SyntaxError)
	if okA || okB {
		return okA && okB && *sa == *sb
	}
	ua, okA := a.(interface{ Unwrap() []error })
	ub, okB := b.(interface{ Unwrap() []error })
	if okA || okB {
		if !okA || !okB || a.Error() != b.Error() {
			return false
		}
		ea, eb := ua.Unwrap(), ub.Unwrap()
		if len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if !sameErr(ea[i], eb[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
