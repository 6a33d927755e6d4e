package textproto

import (
	"bufio"
	"bytes"
	stdtp "net/textproto"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// FuzzLimitStep checks that a Reader stays in step after a line past
// MaxLineBytes, on responses and continued lines built from spec: a call
// either gives net/textproto's result or a limit error, and the next call
// reads what follows the response or the continued line.
func FuzzLimitStep(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	f.Add(byte(40), byte(0), []byte{0x80, 0x01, 0xf0, 0x02})
	f.Add(byte(20), byte(3), []byte{0xf1, 0x11, 0x22})
	f.Add(byte(30), byte(9), []byte{0x33, 0xf0, 0xf1, 0x12})
	f.Fuzz(func(t *testing.T, maxLine, bufSize byte, spec []byte) {
		lim := Limits{MaxLineBytes: len("354 go ahead") + int(maxLine)} // the next reads fit
		size := 16 + int(bufSize)
		var resp, cont bytes.Buffer
		cont.WriteString("Subject:")
		done := false
		for _, b := range spec {
			text := strings.Repeat("x", int(b>>2)*3)
			kind := b & 3
			if resp.Len() == 0 && kind&1 == 1 {
				kind = 0 // the first line has the response's code
			}
			switch kind {
			case 0:
				resp.WriteString("250-" + text + "\r\n")
			case 1:
				resp.WriteString("free " + text + "\r\n") // RFC 959's text between
			case 2:
				resp.WriteString("250 " + text + "\r\n")
				done = true
			case 3:
				resp.WriteString("251-" + text + "\r\n")
			}
			cont.WriteString(" " + text + "\r\n")
			cont.WriteString(string(" \t"[b&1]))
			if done {
				break
			}
		}
		if !done {
			resp.WriteString("250 end\r\n")
		}
		cont.WriteString("end\r\n")
		check := func(name, in, next string, read func(r interface {
			ReadResponse(int) (int, string, error)
			ReadContinuedLine() (string, error)
		}) (string, error)) {
			ours := NewReader(bufio.NewReaderSize(strings.NewReader(in+next), size))
			ours.SetLimits(lim)
			std := stdtp.NewReader(bufio.NewReaderSize(strings.NewReader(in+next), size))
			got, err := read(ours)
			if want, werr := read(std); err == nil && (got != want || werr != nil) {
				t.Fatalf("%s %q: %q, want %q %v", name, in, got, want, werr)
			}
			if err != nil && !isLimitError(err) {
				t.Fatalf("%s %q: %v", name, in, err)
			}
			if after, err := read(ours); after != next[:len(next)-2] && after != "354 go ahead" || err != nil {
				t.Fatalf("%s %q (%v): then %q %v, want %q", name, in, err, after, err, next)
			}
		}
		check("response", resp.String(), "354 go ahead\r\n", func(r interface {
			ReadResponse(int) (int, string, error)
			ReadContinuedLine() (string, error)
		}) (string, error) {
			code, msg, err := r.ReadResponse(0)
			return strings.Join([]string{string(rune('0' + code/100)), string(rune('0' + code/10%10)), string(rune('0' + code%10)), " ", msg}, ""), err
		})
		check("continued line", cont.String(), "NEXT\r\n", func(r interface {
			ReadResponse(int) (int, string, error)
			ReadContinuedLine() (string, error)
		}) (string, error) {
			return r.ReadContinuedLine()
		})
	})
}
