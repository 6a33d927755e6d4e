package sumcmd

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// FuzzCheckList reads arbitrary bytes as a check list (`sum -c -`, the
// list on standard input) the way a run reads one: line by line through
// checkFileEvents, which turns each line into a file to verify or a
// malformed line. -c has no -z (as coreutils 9.1, it refuses the
// pairing), so lines end at '\n'. What must hold: no panic; only the
// events a list makes, one per line at most, in line order, and a
// summary last; a digest of the algorithm's length in hex; a name with
// no NUL. And every line it takes, written back as md5sum writes it
// (escaped where the name needs it; plain, binary and --tag forms),
// parses on a fresh run to the same name and digest.
func FuzzCheckList(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	sum := "d41d8cd98f00b204e9800998ecf8427e"
	for _, s := range []string{
		sum + "  plain\n",
		sum + " *plain\n" + sum + "  -\n",
		sum + " plain\n" + sum + "  plain\n", // the reversed form, then the standard one
		"# a comment\n\n" + strings.ToUpper(sum) + "  a b\r\n",
		"MD5 (plain) = " + sum + "\n",
		"MD5(pl)ain)=" + sum + "\x00x\n",
		"  \\MD5 (back\\\\slash) = " + sum + "\n",
		"\\" + sum + "  new\\nline\n\\" + sum + "  bad\\xescape\n\\" + sum + "  trailing\\\n",
		sum + "  plain\x00junk\n" + sum + "\x00  plain\n" + "\\" + sum + "  pl\x00ain\n",
		sum + "  \x00\n" + sum + "  \n",
		"SHA256 (x) = " + strings.Repeat("ab", 32) + "\n" + strings.Repeat("ab", 32) + "  x",
		"garbage",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte("SHA1 (x) = "+strings.Repeat("0", 40)+"\n"), uint8(1))
	algs := digest.Algorithms()
	f.Fuzz(func(t *testing.T, list []byte, algN uint8) {
		alg := algs[int(algN)%len(algs)]
		r := newSumRun(sumConfig{alg: alg, check: true, files: []string{"-"}}, bytes.NewReader(list), io.Discard, io.Discard, fakeTerminals(0))
		lines := bytes.Count(list, []byte("\n")) + 1
		lastLine, summary := 0, false
		r.checkFileEvents("-", func(ev event) bool {
			if summary {
				t.Fatalf("an event after the summary: %+v", ev)
			}
			switch ev.kind {
			case evSummary:
				summary = true
				return true
			case evFile, evStdin, evMalformed:
			default:
				t.Fatalf("an event of kind %d from a list: %+v", ev.kind, ev)
			}
			if ev.line <= lastLine || ev.line > lines {
				t.Fatalf("line %d after line %d, of %d", ev.line, lastLine, lines)
			}
			lastLine = ev.line
			if ev.kind == evMalformed {
				return true
			}
			hex := string(ev.want[:ev.nwant])
			if ev.nwant != 2*alg.Size() || !validHex([]byte(hex), 2*alg.Size()) || strings.IndexByte(ev.name, 0) >= 0 || (ev.kind == evStdin) != (ev.name == "-") {
				t.Fatalf("line %d: %s: name %q, digest %q", ev.line, kindName(ev.kind), ev.name, hex)
			}
			if ev.name == "" {
				return true // "HEX  \x00": md5sum writes no line of an empty name
			}
			hex = strings.ToLower(hex)
			for _, form := range md5sumForms(alg, ev.name, hex) {
				bsdRev := -1
				c, ok := parseCheckLine([]byte(form), alg, &bsdRev)
				if !ok || c.name != ev.name || string(c.hex) != hex {
					t.Fatalf("line %d: name %q, digest %s; written back as %q it parses to %v: %q, %q", ev.line, ev.name, hex, form, ok, c.name, c.hex)
				}
			}
			return true
		})
		if !summary {
			t.Fatal("no summary")
		}
	})
}

// md5sumForms writes a checksum line for name the ways md5sum (and its
// sha*sum siblings) writes it: text, binary, and --tag, each escaped
// with a leading '\' where the name has a '\', '\n' or '\r'.
func md5sumForms(alg digest.Algorithm, name, hex string) []string {
	prefix, n := "", name
	if needsEscape(name) {
		prefix, n = `\`, string(appendEscaped(nil, name))
	}
	return []string{
		prefix + hex + "  " + n,
		prefix + hex + " *" + n,
		prefix + alg.Tag() + " (" + n + ") = " + hex,
	}
}

func kindName(k eventKind) string {
	switch k {
	case evFile:
		return "file"
	case evStdin:
		return "stdin"
	case evMalformed:
		return "malformed"
	}
	return "event"
}
