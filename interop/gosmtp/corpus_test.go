package gosmtp

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A payload is the bytes a client sends after the 354 reply to DATA.
type payload struct {
	name string
	data string
	// want is what go-smtp is known to do with data, beside wirespeed's Raw
	// mode with BareKeep.
	want expect
}

type expect uint8

const (
	unchecked expect = iota // left to the differential alone
	same                    // the same data, ended at the same byte
	// differs: go-smtp departs from RFC 5321 here (see goSMTPDeviation)
	// and the data or the end differ.
	differs
	// harmless: one of go-smtp's departures starts here, but it changes
	// nothing.
	harmless
)

// handPayloads are the cases go-smtp's own tests send, the SMTP smuggling
// family, dot-stuffing corners and long lines.
func handPayloads() []payload {
	ps := []payload{
		// From go-smtp's tests: a bare CR inside a line and a stuffed dot.
		{name: "gosmtp/bare-CR", data: "From: root@nsa.gov\r\n\r\nHey\r <3\r\n..this dot is fine\r\n.\r\n", want: same},
		// "\n.\n" is data: a bare LF ends no line.
		{name: "gosmtp/LF-dot-LF", data: "From: root@nsa.gov\r\n\r\nhey\r\n\n.\nthis is going to break your server\r\n.\r\n", want: same},
		{name: "gosmtp/smuggling/CRLF-dot-LF", data: "This is a message with an SMTP smuggling dot:\r\n.\nFinal dot comes after.\r\n.\r\n", want: same},
		{name: "gosmtp/smuggling/LF-dot-CRLF", data: "This is a message with an SMTP smuggling dot:\n.\r\nFinal dot comes after.\r\n.\r\n", want: same},

		// SMTP smuggling with a second transaction behind the fake end:
		// one message for both peers.
		{name: "smuggling/LF-dot-LF-commands", data: "a\r\n\n.\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n", want: same},
		{name: "smuggling/CRLF-dot-LF-commands", data: "a\r\n.\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n", want: same},
		{name: "smuggling/LF-dot-CRLF-commands", data: "a\n.\r\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n", want: same},
		{name: "smuggling/CR-dot-CRLF", data: "a\r.\r\nMAIL FROM:<e@x>\r\n.\r\n", want: same},
		{name: "smuggling/CR-dot-CR", data: "a\r.\rMAIL FROM:<e@x>\r\n.\r\n", want: same},
		{name: "smuggling/CRLF-dot-NUL-CRLF", data: "a\r\n.\x00\r\nMAIL FROM:<e@x>\r\n.\r\n", want: same},
		// go-smtp drops the CR of ".\r" before "M" (deviation 2).
		{name: "smuggling/CRLF-dot-CR-commands", data: "a\r\n.\rMAIL FROM:<e@x>\r\n.\r\n", want: differs},

		// A CR before CRLF: the CRLF ends the line, so the "." line ends
		// the data (RFC 5321 §4.1.1.4). go-smtp runs on into the next
		// command (deviation 1; an earlier review found this).
		{name: "CR-CRLF-dot", data: "a\r\r\n.\r\n", want: differs},
		{name: "CR-CRLF-stuffed", data: "a\r\r\n..b\r\n.\r\n", want: differs},
		{name: "dot-CR-CRLF-dot", data: ".\r\r\n.\r\n", want: differs},
		{name: "dot-CR-x", data: ".\rx\r\n.\r\n", want: differs},
		// "\r\r" with no LF after it: go-smtp takes the second CR as data
		// where it should have waited for an LF, but no LF comes.
		{name: "CR-CR-x", data: "a\r\rb\r\n.\r\n", want: harmless},

		// Dots.
		{name: "empty", data: ".\r\n", want: same},
		{name: "empty-line", data: "\r\n.\r\n", want: same},
		{name: "stuffed-dot", data: "..\r\n.\r\n", want: same},
		{name: "stuffed-dots", data: "...\r\n.\r\n", want: same},
		{name: "dot-text", data: ".a\r\n.\r\n", want: same},
		{name: "dot-space", data: ". \r\n.\r\n", want: same},
		{name: "dot-LF", data: ".\n.\r\n", want: same},
		{name: "dot-mid-line", data: "a.\r\n a\r\n.\r\n", want: same},
		{name: "dots-every-line", data: "..a\r\n..\r\n...\r\n.b.\r\n.\r\n", want: same},
		{name: "end-then-more", data: "a\r\n.\r\n.\r\n", want: same},
		{name: "end-then-bytes", data: "a\r\n.\r\nxyzw\r\n", want: same},
		{name: "end-at-start", data: ".\r\nNOOP\r\n", want: same},

		// Blocks that do not end in the payload: closer ends them.
		{name: "unterminated", data: "abc", want: same},
		{name: "no-CRLF-before-dot", data: "abc.\r\n", want: same},
		{name: "CRLF", data: "\r\n", want: same},
		{name: "CR", data: "\r", want: same},
		{name: "LF", data: "\n", want: same},
		{name: "dot", data: ".", want: same},
		{name: "CRLF-dot", data: "\r\n.", want: same},
		// go-smtp drops the CR of ".\r" before closer's "Z" (deviation 2).
		{name: "CRLF-dot-CR", data: "\r\n.\r", want: differs},

		// Other bytes.
		{name: "NUL-and-8bit", data: "\x00\xff\xfe\x80\r\n\x00.\r\n.\r\n", want: same},
		{name: "long-line-10000", data: strings.Repeat("x", 10000) + "\r\n.\r\n", want: same},
		{name: "long-line-70000", data: strings.Repeat("y", 70000) + "\r\n.\r\n", want: same},
		{name: "long-dots-5000", data: strings.Repeat(".", 5000) + "\r\n.\r\n", want: same},
		{name: "long-line-bare-LF", data: strings.Repeat("z\n", 3000) + "\r\n.\r\n", want: same},
		{name: "many-lines", data: strings.Repeat("line\r\n", 5000) + ".\r\n", want: same},
	}

	// A bare CR and a bare LF at every offset of a small message; which of
	// them go-smtp deviates on is left to goSMTPDeviation.
	const base = "Subject: x\r\n\r\n.body\r\n..\r\nend\r\n.\r\n"
	for i := range len(base) + 1 {
		for _, b := range []struct{ name, c string }{{"CR", "\r"}, {"LF", "\n"}} {
			data := base[:i] + b.c + base[i:]
			ps = append(ps, payload{
				name: fmt.Sprintf("bare-%s-at-%d", b.name, i),
				data: data,
			})
		}
	}
	return ps
}

// randomPayload generates a payload from seed: lines of letters, spaces,
// dots, CR, LF and the pieces of the end marker and of smuggling sequences,
// ending with the end marker most of the time.
func randomPayload(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0xd07))
	tokens := []string{"a", "b", " ", ".", "..", "\n", "\r\n", "\r\n", "\r\n", "\r\n.", ".\r\n", "\r\n.\r\n", "\n.\n", "\x00", "\xff"}
	if r.IntN(2) == 0 {
		// Half the payloads also have bare CRs, which lead to go-smtp's
		// deviations ("\r\r", ".\r" at a line start).
		tokens = append(tokens, "\r", "\r", "a\rb", "\r\r\n", ".\r")
	}
	var b []byte
	for range r.IntN(60) {
		if r.IntN(40) == 0 {
			b = append(b, strings.Repeat("x", 500+r.IntN(5000))...)
			continue
		}
		b = append(b, tokens[r.IntN(len(tokens))]...)
	}
	if r.IntN(5) != 0 {
		b = append(b, "\r\n.\r\n"...)
	}
	return b
}

func (e expect) String() string {
	switch e {
	case same:
		return "same as wirespeed"
	case differs:
		return "differs from wirespeed, as known"
	case harmless:
		return "a known departure that changes nothing"
	}
	return "unchecked"
}
