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
// is read to its end and held no further: it counts as an improperly
// formatted line, as a short malformed line does under md5sum, and a
// comment that long is skipped; the lines around it are checked. md5sum
// would hold it whole.
func TestCheckLineTooLong(t *testing.T) {
	f := newSumFixture(t)
	md5sum := coreutils(t, "md5sum")
	sum := strings.Fields(runTool(t, f.dir, "C", nil, md5sum, "plain").stdout)[0]
	good := sum + "  plain\n"
	long := f.writeCheck(t, "long.md5", good+sum+"  "+strings.Repeat("a", 8<<20)+"\n"+"#"+strings.Repeat("b", 8<<20)+"\n"+good)
	short := f.writeCheck(t, "short.md5", good+"not a check line\n"+good)
	f.compare(t, "md5sum", "md5", nil, "-c", "-w", short)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := runSumIn(t, f.dir, "C", nil, "-c", "-w", long)
	runtime.ReadMemStats(&after)
	want := runSumIn(t, f.dir, "C", nil, "-c", "-w", short)
	want.stderr = strings.ReplaceAll(want.stderr, "short.md5: 2:", "long.md5: 2:")
	if got != want {
		t.Errorf("with a long line: %+v\nwith a short malformed line: %+v", got, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("allocated %d bytes to check lines of 8 MiB (held to %d)", n, maxCheckLine)
	}
}
