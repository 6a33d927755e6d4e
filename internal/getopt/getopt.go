// Package getopt parses a command line as GNU getopt_long does, for
// `wirespeed sum` and for the docs' checks of its commands: options and
// operands may mix, "--" ends the options, short options group (-cz) and
// take their argument in the same word or the next (-asha256, -a sha256),
// long options take theirs after "=" or in the next word, and a long
// option may be abbreviated to a prefix of it that no other option has.
// With POSIXLY_CORRECT in the environment, the first operand ends the
// options, as it does for getopt_long.
// Its errors are getopt_long's messages.
package getopt

import (
	"fmt"
	"os"
	"strings"
)

// An Option is an option a command takes.
type Option struct {
	Name   string // the long name, without "--"
	HasArg bool   // it takes an argument
	Short  byte   // the short form's letter, or 0
}

// A Given is an option given on a command line.
type Given struct {
	Name     string // the option's long name, in full
	Value    string // its argument
	HasValue bool   // it takes one (and was given it)
	// First and Last are the indexes in the arguments of its words (Last
	// > First when its argument is the next word).
	First, Last int
}

// Parse parses args against opts. It returns the options given and the
// operands, in order; on an error, the options given before it and the
// error, whose text is getopt_long's (the caller reports it, as
// getopt_long would have, after acting on the options before it).
func Parse(opts []Option, args []string) (given []Given, operands []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return given, append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, value, hasEq := strings.Cut(a[2:], "=")
			o, err := lookup(opts, name, a)
			if err != nil {
				return given, nil, err
			}
			g := Given{Name: o.Name, First: i, Last: i}
			switch {
			case hasEq && !o.HasArg:
				return given, nil, fmt.Errorf("option '--%s' doesn't allow an argument", o.Name)
			case o.HasArg && !hasEq:
				if i+1 >= len(args) {
					return given, nil, fmt.Errorf("option '--%s' requires an argument", o.Name)
				}
				i++
				value, g.Last = args[i], i
			}
			g.Value, g.HasValue = value, o.HasArg
			given = append(given, g)
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				o, ok := short(opts, a[k])
				if !ok {
					return given, nil, fmt.Errorf("invalid option -- '%c'", a[k])
				}
				g := Given{Name: o.Name, First: i, Last: i}
				if o.HasArg {
					switch {
					case k+1 < len(a):
						g.Value = a[k+1:]
					case i+1 < len(args):
						i++
						g.Value, g.Last = args[i], i
					default:
						return given, nil, fmt.Errorf("option requires an argument -- '%c'", a[k])
					}
					g.HasValue = true
					k = len(a)
				}
				given = append(given, g)
			}
		case posix():
			return given, append(operands, args[i:]...), nil
		default:
			operands = append(operands, a)
		}
	}
	return given, operands, nil
}

// posix reports whether POSIXLY_CORRECT is in the environment (set, if
// empty): getopt_long then stops at the first operand instead of taking
// the options after it.
func posix() bool {
	_, ok := os.LookupEnv("POSIXLY_CORRECT")
	return ok
}

// lookup returns the long option name stands for: the one of that name,
// or the only one it is a prefix of. arg is the word, for messages.
func lookup(opts []Option, name, arg string) (Option, error) {
	var matches []Option
	for _, o := range opts {
		if o.Name == name {
			return o, nil
		}
		if strings.HasPrefix(o.Name, name) {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Option{}, fmt.Errorf("unrecognized option '%s'", arg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "option '%s' is ambiguous; possibilities:", arg)
	for _, m := range matches {
		fmt.Fprintf(&b, " '--%s'", m.Name)
	}
	return Option{}, fmt.Errorf("%s", b.String())
}

func short(opts []Option, c byte) (Option, bool) {
	for _, o := range opts {
		if o.Short != 0 && o.Short == c {
			return o, true
		}
	}
	return Option{}, false
}
