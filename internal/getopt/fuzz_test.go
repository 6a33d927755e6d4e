package getopt

import (
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// FuzzParse parses arbitrary command lines (the words split at NUL,
// which no argument holds) against sum's options: no panic, and on
// success every word accounted for, once, in order: an option's word or
// its argument's, the "--" that ends the options, or an operand. On an
// error (getopt_long's message: the package has no sentinel errors, its
// callers print the text) the options before it are still well formed
// and no operands come back.
func FuzzParse(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for _, s := range []string{
		"-a\x00sha256\x00--tag\x00f1\x00-cz\x00--algorithm=md5\x00f2\x00--\x00-c",
		"-asha1\x00-\x00--qui\x00--alg\x00sha512\x00--stat",
		"--st", "--tag\x00--frob=1", "-q", "-c\x00-a", "--algorithm", "--ta=x",
		"--=x", "---", "-", "--\x00--", "-ca", "--check=", "--z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if posix() {
			t.Skip("POSIXLY_CORRECT is set")
		}
		args := strings.Split(line, "\x00")
		given, operands, err := Parse(opts, args)
		next := 0 // the first word no given option has taken
		for _, g := range given {
			i := slices.IndexFunc(opts, func(o Option) bool { return o.Name == g.Name })
			if i < 0 || g.HasValue != opts[i].HasArg || g.First > g.Last || g.Last >= len(args) || g.Last-g.First > 1 || g.First < next-1 {
				t.Fatalf("%q: given %+v", args, g)
			}
			if !g.HasValue && g.Value != "" || g.Last > g.First && g.Value != args[g.Last] || g.Last == g.First && !strings.HasSuffix(args[g.First], g.Value) {
				t.Fatalf("%q: given %+v", args, g)
			}
			next = g.Last + 1
		}
		if err != nil {
			if operands != nil || err.Error() == "" {
				t.Fatalf("%q: operands %q with error %v", args, operands, err)
			}
			return
		}
		// Walk the words again: each is an option's (or its argument),
		// the "--" ending the options, or the next operand.
		taken := make([]bool, len(args))
		for _, g := range given {
			for i := g.First; i <= g.Last; i++ {
				taken[i] = true
			}
		}
		k := 0
		for i, a := range args {
			if taken[i] {
				if !strings.HasPrefix(a, "-") && i > 0 && !taken[i-1] {
					t.Fatalf("%q: word %d %q taken as an option", args, i, a)
				}
				continue
			}
			if a == "--" {
				if !slices.Equal(operands[k:], args[i+1:]) {
					t.Fatalf("%q: operands %q after --", args, operands)
				}
				return
			}
			if k >= len(operands) || operands[k] != a {
				t.Fatalf("%q: word %d %q, operands %q", args, i, a, operands)
			}
			k++
		}
		if k != len(operands) {
			t.Fatalf("%q: operands %q, %d words", args, operands, k)
		}
	})
}
