package sumcmd

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Lines of a check list at the edges of coreutils' parsing, each in a
// list of its own (so that the reversed form's state starts afresh),
// verified by md5sum -c -w and by us: the same verdicts, warnings and
// exit status. TestSumCheckMatchesCoreutils covers the common forms;
// these are the corners FuzzCheckList's round trip does not decide.
func TestCheckLinesMatchMd5sum(t *testing.T) {
	f := newSumFixture(t)
	md5sum := coreutils(t, "md5sum")
	sum := strings.Fields(runTool(t, f.dir, "C", nil, md5sum, "plain").stdout)[0]
	bs := strings.Fields(runTool(t, f.dir, "C", nil, md5sum, `back\slash`).stdout)[0]
	bs = strings.TrimPrefix(bs, `\`)
	for i, line := range []string{
		"\t" + sum + "  plain",     // leading tab
		" \t " + sum + " *plain",   // leading blanks, binary
		"\v" + sum + "  plain",     // a vertical tab is no blank
		sum + "\t*plain",           // tab, then binary
		sum + "  *plain",           // a name starting with '*'
		sum + " **plain",           // binary, a name starting with '*'
		sum + " \tplain",           // the reversed form, a name starting with a tab
		sum + "   lead",            // a name starting with a blank
		sum + "  plain ",           // a trailing blank in the name
		sum + "  plain\r\r",        // two CRs: one is the line end's
		"\r",                       // a CR alone
		"  # not a comment",        // '#' only first
		`\# not a comment`,         // escaped '#'
		`\`,                        // a backslash alone
		`\\` + sum + "  plain",     // two backslashes
		`\` + bs + `  back\\slash`, // escaped, right sum
		`\` + bs + ` back\\slash`,  // escaped, reversed form
		`\` + sum + `  cr\rret`,    // escaped CR, wrong sum
		sum + `  cr\rret`,          // not escaped: a backslash in the name
		`\` + sum + `  new\nline`,  // escaped newline, wrong sum
		strings.ToUpper(sum[:16]) + sum[16:] + "  plain", // mixed case
		sum[:31] + "g  plain",                            // not hex
		"MD5  (plain) = " + sum,                          // two blanks after the tag
		"MD5\t(plain) = " + sum,                          // a tab after the tag
		"md5 (plain) = " + sum,                           // a lower-case tag
		"MD5 (plain) =" + sum,                            // no blank after '='
		"MD5 (plain)= " + sum,                            // none before it
		"MD5 (plain) = " + sum + " ",                     // a blank after the digest
		"MD5 (plain) = " + sum + "\r",                    // a CR after it
		"MD5 (plain) =\t" + sum,                          // a tab before it
		"MD5 (pl)ain) = " + sum,                          // a ')' in the name
		"MD5 (plain) = " + sum + ") = " + sum,            // the name runs to the last ')'
		"MD5 () = " + sum,                                // an empty name
		"MD5 (",                                          // cut short
		"MD5 (plain)",                                    // no digest
		`\MD5 (plain) = ` + sum,                          // escaped tag, plain name
		`\MD5 (back\\slash) = ` + bs,                     // escaped tag, escaped name
		`\MD5 (bad\xescape) = ` + sum,                    // escaped tag, bad escape
		"MD5 (back\\slash) = " + bs,                      // not escaped: one backslash
		"SHA256 (plain) = " + sum,                        // another algorithm's tag
		"MD5 (plain) = " + sum[:31],                      // a short digest
		sum + "  " + strings.Repeat("a", 70<<10),         // a name past the read buffer and NAME_MAX
	} {
		name := f.writeCheck(t, fmt.Sprintf("line%02d.md5", i), line+"\n")
		f.compare(t, "md5sum", "md5", nil, "-c", "-w", name)
	}
}

// A check line longer than maxCheckLine (no file can have such a name)
// is read to its end but only its first maxCheckLine bytes kept: a check
// of a file fails as md5sum's does (the file cannot be opened; it is named
// by its first MiB), a comment that long is skipped, and the lines around
// are checked. md5sum holds the line whole.
func TestCheckLineTooLong(t *testing.T) {
	f := newSumFixture(t)
	md5sum := coreutils(t, "md5sum")
	sum := strings.Fields(runTool(t, f.dir, "C", nil, md5sum, "plain").stdout)[0]
	good := sum + "  plain\n"
	long := f.writeCheck(t, "long.md5", good+sum+"  "+strings.Repeat("a", 8<<20)+"\n"+"#"+strings.Repeat("b", 8<<20)+"\n"+good)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := runSumIn(t, f.dir, "C", nil, "-c", "-w", long)
	runtime.ReadMemStats(&after)
	want := runTool(t, f.dir, "C", nil, md5sum, "-c", "-w", long)
	summary := func(o runOutput) string { // the verdicts, less the long name
		var lines []string
		for _, l := range strings.Split(o.stdout+o.stderr, "\n") {
			if len(l) < 200 {
				lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "md5sum: "), "wirespeed sum: "))
			}
		}
		return fmt.Sprintf("%d %q", o.code, lines)
	}
	if summary(got) != summary(want) || !strings.Contains(got.stderr, "WARNING: 1 listed file could not be read") {
		t.Errorf("with a long line:\nours   %s\nmd5sum %s", summary(got), summary(want))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 { // a few copies of the kept MiB: the name in messages
		t.Errorf("allocated %d bytes to check lines of 8 MiB (held to %d)", n, maxCheckLine)
	}
}
