package sumcmd

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestQuoteNameMatchesCoreutils passes names of missing files to md5sum
// and compares its diagnostics with quoteName, in the C and a UTF-8 locale.
func TestQuoteNameMatchesCoreutils(t *testing.T) {
	md5sum := coreutils(t, "md5sum")
	names := []string{
		"plain", "a b", "no\nsuch", "it's no", `back\no`, "tab\tno", "caf\xc3\xa9no", "$x", "a*", "x~", "~x",
		"a=b", "#a", "a#", `a'b"c`, "x:y", "{", "}", "a{b", "@at", "q?", "\x01ctl", "\nlead", "trail\n",
		"a\n\nb", "\n'", "'\n", "bad\xffutf", "\x7fdel", "sp ace's", "it's{x", "a'#b", "ü", "日本", "a]b", "%+,-./_",
		"\x01'\x02", "\x01'x\x02", "é'\n", "a'é\x01", "'\x01\x02'", "\u00a0nbsp", "a\r", "back\\'", "'", "''", `"`, "!", "a|b", "[x]", "^", "`", "a;b", "a&b",
		// Format, private-use and replacement characters print in UTF-8;
		// line and paragraph separators and unassigned ones do not.
		"\u200b", "x\u00ady", "\u202e", "\u2060", "\u0600", "\ue000", "\ufffd", "a\u2028b", "\u2029", "\U000e0001", "\U0010fffd", "\u0378",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab '\"\\\n\t:#~{}$*=?@\x01\x7f\xc3\xa9\xff.-"
	for range 150 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		if n := b.String(); strings.Trim(n, ".") != "" && n != "-" {
			names = append(names, n)
		}
	}
	dir := t.TempDir()
	for _, locale := range []string{"C", "C.UTF-8"} {
		want := runTool(t, dir, locale, nil, md5sum, append([]string{"--"}, names...)...)
		lines := strings.SplitAfter(want.stderr, "\n")
		if len(lines) != len(names)+1 {
			t.Fatalf("%s: md5sum printed %d diagnostics for %d names", locale, len(lines)-1, len(names))
		}
		for i, name := range names {
			w := strings.TrimSuffix(strings.TrimPrefix(lines[i], "md5sum: "), ": No such file or directory\n")
			if got := quoteName(name, locale != "C"); got != w {
				t.Errorf("%s: quoteName(%q) = %s, coreutils %s", locale, name, got, w)
			}
		}
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, name := range []string{"", "a", `a\b`, "a\nb", "a\rb", `\\`, "\n\r\\x"} {
		esc := appendEscaped(nil, name)
		back, ok := unescapeName(esc)
		if !ok || back != name || needsEscape(name) != (string(esc) != name) {
			t.Errorf("escape %q -> %q -> %q, %v", name, esc, back, ok)
		}
	}
	for _, bad := range []string{`a\`, `\x`, "a\x00b", `\\\`} {
		if _, ok := unescapeName([]byte(bad)); ok {
			t.Errorf("unescapeName(%q) accepted", bad)
		}
	}
}

// as91 turns the check-mode escaping of later coreutils releases (names
// with '\' or '\r' escaped too) into 9.1's, and leaves 9.1's alone.
func TestAs91(t *testing.T) {
	later := "\\back\\\\slash: OK\n\\cr\\rret: FAILED\n\\new\\nline: OK\nplain: FAILED open or read\n"
	want := "back\\slash: OK\ncr\rret: FAILED\n\\new\\nline: OK\nplain: FAILED open or read\n"
	if got := as91(later); got != want {
		t.Errorf("as91(%q) = %q, want %q", later, got, want)
	}
	if got := as91(want); got != want {
		t.Errorf("as91 changed 9.1 output %q to %q", want, got)
	}
}
