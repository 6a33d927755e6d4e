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
	// deviates marks the payloads on which go-smtp is known to depart from
	// RFC 5321 (see goSMTPDeviation); the tests check that it does.
	deviates bool
}

// handPayloads are the cases go-smtp's own tests send, the SMTP smuggling
// family, dot-stuffing corners and long lines.
func handPayloads() []payload {
	ps := []payload{
		// From go-smtp's tests: a bare CR inside a line and a stuffed dot.
		{name: "gosmtp/bare-CR", data: "From: root@nsa.gov\r\n\r\nHey\r <3\r\n..this dot is fine\r\n.\r\n"},
		// "\n.\n" is data: a bare LF ends no line.
		{name: "gosmtp/LF-dot-LF", data: "From: root@nsa.gov\r\n\r\nhey\r\n\n.\nthis is going to break your server\r\n.\r\n"},
		{name: "gosmtp/smuggling/CRLF-dot-LF", data: "This is a message with an SMTP smuggling dot:\r\n.\nFinal dot comes after.\r\n.\r\n"},
		{name: "gosmtp/smuggling/LF-dot-CRLF", data: "This is a message with an SMTP smuggling dot:\n.\r\nFinal dot comes after.\r\n.\r\n"},

		// SMTP smuggling with a second transaction behind the fake end:
		// one message for both peers.
		{name: "smuggling/LF-dot-LF-commands", data: "a\r\n\n.\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n"},
		{name: "smuggling/CRLF-dot-LF-commands", data: "a\r\n.\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n"},
		{name: "smuggling/LF-dot-CRLF-commands", data: "a\n.\r\nMAIL FROM:<e@x>\r\nRCPT TO:<v@y>\r\nDATA\r\nforged\r\n.\r\n"},
		{name: "smuggling/CR-dot-CRLF", data: "a\r.\r\nMAIL FROM:<e@x>\r\n.\r\n"},
		{name: "smuggling/CR-dot-CR", data: "a\r.\rMAIL FROM:<e@x>\r\n.\r\n"},
		{name: "smuggling/CRLF-dot-NUL-CRLF", data: "a\r\n.\x00\r\nMAIL FROM:<e@x>\r\n.\r\n"},
		// go-smtp drops the CR of ".\r" before "M" (deviation 2).
		{name: "smuggling/CRLF-dot-CR-commands", data: "a\r\n.\rMAIL FROM:<e@x>\r\n.\r\n", deviates: true},

		// A CR before CRLF: the CRLF ends the line, so the "." line ends
		// the data (RFC 5321 §4.1.1.4). go-smtp runs on into the next
		// command (deviation 1; an earlier review found this).
		{name: "CR-CRLF-dot", data: "a\r\r\n.\r\n", deviates: true},
		{name: "CR-CRLF-stuffed", data: "a\r\r\n..b\r\n.\r\n", deviates: true},
		{name: "dot-CR-CRLF-dot", data: ".\r\r\n.\r\n", deviates: true},
		{name: "dot-CR-x", data: ".\rx\r\n.\r\n", deviates: true},
		{name: "CR-CR-x", data: "a\r\rb\r\n.\r\n", deviates: true},

		// Dots.
		{name: "empty", data: ".\r\n"},
		{name: "empty-line", data: "\r\n.\r\n"},
		{name: "stuffed-dot", data: "..\r\n.\r\n"},
		{name: "stuffed-dots", data: "...\r\n.\r\n"},
		{name: "dot-text", data: ".a\r\n.\r\n"},
		{name: "dot-space", data: ". \r\n.\r\n"},
		{name: "dot-LF", data: ".\n.\r\n"},
		{name: "dot-mid-line", data: "a.\r\n a\r\n.\r\n"},
		{name: "dots-every-line", data: "..a\r\n..\r\n...\r\n.b.\r\n.\r\n"},
		{name: "end-then-more", data: "a\r\n.\r\n.\r\n"},
		{name: "end-then-bytes", data: "a\r\n.\r\nxyzw\r\n"},
		{name: "end-at-start", data: ".\r\nNOOP\r\n"},

		// Blocks that do not end in the payload: closer ends them.
		{name: "unterminated", data: "abc"},
		{name: "no-CRLF-before-dot", data: "abc.\r\n"},
		{name: "CRLF", data: "\r\n"},
		{name: "CR", data: "\r"},
		{name: "LF", data: "\n"},
		{name: "dot", data: "."},
		{name: "CRLF-dot", data: "\r\n."},
		// go-smtp drops the CR of ".\r" before closer's "Z" (deviation 2).
		{name: "CRLF-dot-CR", data: "\r\n.\r", deviates: true},

		// Other bytes.
		{name: "NUL-and-8bit", data: "\x00\xff\xfe\x80\r\n\x00.\r\n.\r\n"},
		{name: "long-line-10000", data: strings.Repeat("x", 10000) + "\r\n.\r\n"},
		{name: "long-line-70000", data: strings.Repeat("y", 70000) + "\r\n.\r\n"},
		{name: "long-dots-5000", data: strings.Repeat(".", 5000) + "\r\n.\r\n"},
		{name: "long-line-bare-LF", data: strings.Repeat("z\n", 3000) + "\r\n.\r\n"},
		{name: "many-lines", data: strings.Repeat("line\r\n", 5000) + ".\r\n"},
	}

	// A bare CR and a bare LF at every offset of a small message; which of
	// them go-smtp deviates on is left to goSMTPDeviation.
	const base = "Subject: x\r\n\r\n.body\r\n..\r\nend\r\n.\r\n"
	for i := range len(base) + 1 {
		for _, b := range []struct{ name, c string }{{"CR", "\r"}, {"LF", "\n"}} {
			data := base[:i] + b.c + base[i:]
			ps = append(ps, payload{
				name:     fmt.Sprintf("bare-%s-at-%d", b.name, i),
				data:     data,
				deviates: goSMTPDeviation([]byte(data+closer), int64(len(data))) >= 0,
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
