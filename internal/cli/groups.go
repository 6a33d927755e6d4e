package cli

import (
	"flag"
	"strings"
)

// Grouped rewrites the one-letter flags of args grouped in one word as
// getopt(3) takes them, for the commands that have Postfix's tools'
// flags: "-dc" is "-d -c", and a letter that takes a value takes the next
// word ("-dm 3") or the rest of the word where that starts with a digit
// ("-m3", "-l1000:2000"). Only such words are rewritten: one that names a
// flag of fs itself is left as it is, and so is one with a letter that is
// no one-letter flag or a value that does not start with a digit, for
// fs.Parse to take or refuse as it would ("-help", "-nosuchflag"), as is
// everything after "--" or the first operand, where fs.Parse stops.
func Grouped(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if f := fs.Lookup(name); f != nil {
			out = append(out, a)
			if !hasValue && !isBool(f) && i+1 < len(args) {
				i++ // the flag's value
				out = append(out, args[i])
			}
			continue
		}
		words, next := expand(fs, a[1:])
		if words == nil {
			out = append(out, a)
			continue
		}
		out = append(out, words...)
		if next && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// expand spells out group, the letters of a word after its "-", as
// separate flags; nil if a letter is no one-letter flag of fs. next says
// that the last flag takes the next word as its value.
func expand(fs *flag.FlagSet, group string) (words []string, next bool) {
	if strings.HasPrefix(group, "-") {
		return nil, false // "--name": a long flag fs does not have
	}
	for j := 0; j < len(group); j++ {
		f := fs.Lookup(group[j : j+1])
		if f == nil {
			return nil, false
		}
		words = append(words, "-"+group[j:j+1])
		if !isBool(f) {
			switch rest := group[j+1:]; {
			case rest == "":
				return words, true
			case rest[0] >= '0' && rest[0] <= '9':
				return append(words, rest), false
			}
			return nil, false // a misspelt flag, more likely than a value
		}
	}
	return words, false
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
