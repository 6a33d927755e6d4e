package doccheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/getopt"
)

// A Flag is one flag of a command, as its usage message describes it.
type Flag struct {
	Name string
	// Type is the value's name in the usage message ("string",
	// "duration", "int", "FILE", "value", ...); "" for a boolean flag.
	Type string
}

// A FlagSet is the flags of one command, read from its usage message.
type FlagSet struct {
	Command string
	Flags   map[string]Flag
	// GNU holds the options of a command that takes GNU-style ones (-a
	// NAME, --long[=V], grouped short options, abbreviations, options
	// after operands), as `wirespeed sum` does; nil for a Go one.
	GNU []getopt.Option
}

// goFlagRE matches a flag's first line in the output of the flag package's
// PrintDefaults: two spaces, the flag, and its value's name if it takes
// one; a one-letter flag's usage follows on the same line after a tab.
var goFlagRE = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_.-]*)(?: ([^\t ]+))?(?:\t.*)?$`)

// ParseGoUsage reads the flags of command from usage, a usage message
// printed by the flag package (its PrintDefaults part). It fails if there
// are none.
func ParseGoUsage(command, usage string) (*FlagSet, error) {
	fs := &FlagSet{Command: command, Flags: map[string]Flag{}}
	for _, line := range strings.Split(usage, "\n") {
		if m := goFlagRE.FindStringSubmatch(line); m != nil {
			fs.Flags[m[1]] = Flag{Name: m[1], Type: m[2]}
		}
	}
	if len(fs.Flags) == 0 {
		return nil, fmt.Errorf("%s: no flags in its usage message:\n%s", command, usage)
	}
	return fs, nil
}

// gnuFlagRE matches an option's line in a GNU-style --help: "  -a, --algorithm=NAME  ..."
// or "      --tag  ...".
var gnuFlagRE = regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][A-Za-z0-9-]*)(=[A-Z]+)?(?:\s|$)`)

// ParseGNUHelp reads the options of command from a GNU-style --help text.
func ParseGNUHelp(command, help string) (*FlagSet, error) {
	fs := &FlagSet{Command: command, Flags: map[string]Flag{}}
	for _, line := range strings.Split(help, "\n") {
		m := gnuFlagRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := Flag{Name: m[2], Type: strings.TrimPrefix(m[3], "=")}
		fs.Flags[f.Name] = f
		o := getopt.Option{Name: f.Name, HasArg: f.Type != ""}
		if m[1] != "" {
			o.Short = m[1][0]
		}
		fs.GNU = append(fs.GNU, o)
	}
	if len(fs.Flags) == 0 {
		return nil, fmt.Errorf("%s: no options in its --help:\n%s", command, help)
	}
	return fs, nil
}

// An Arg is a flag given on a command line.
type Arg struct {
	Name     string
	Value    string
	HasValue bool // a value was given (always, for a flag that takes one)
	// First and Last are the indexes of the flag's words in the
	// arguments (Last > First when its value is the next word).
	First, Last int
}

// Parse parses args as the command's flag package (or, for a GNU command,
// getopt_long) would, and returns the flags given and the positional
// arguments. Values of the flag package's own types (duration, int, uint,
// float, bool) must parse as such. Words that hold shell expansions
// ($...) are taken as given.
func (fs *FlagSet) Parse(args []string) (flags []Arg, positional []string, err error) {
	if fs.GNU != nil {
		return fs.parseGNU(args)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return flags, args[i:], nil
		}
		if a == "--" {
			return flags, args[i+1:], nil
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		value, hasValue := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, value, hasValue = name[:k], name[k+1:], true
		}
		if name == "h" || name == "help" {
			if _, ok := fs.Flags[name]; !ok {
				return nil, nil, fmt.Errorf("%s: -%s asks for the usage message", fs.Command, name)
			}
		}
		f, ok := fs.Flags[name]
		if !ok {
			return nil, nil, fmt.Errorf("%s: flag provided but not defined: -%s", fs.Command, name)
		}
		arg := Arg{Name: name, First: i, Last: i}
		if f.Type == "" {
			if hasValue {
				if _, err := strconv.ParseBool(value); err != nil {
					return nil, nil, fmt.Errorf("%s: -%s=%s: not a boolean", fs.Command, name, value)
				}
			}
		} else {
			if !hasValue {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("%s: flag needs an argument: -%s", fs.Command, name)
				}
				i++
				value = args[i]
				arg.Last = i
			}
			hasValue = true
			if err := checkValue(f, value); err != nil {
				return nil, nil, fmt.Errorf("%s: -%s %s: %v", fs.Command, name, value, err)
			}
		}
		arg.Value, arg.HasValue = value, hasValue
		flags = append(flags, arg)
	}
	return flags, nil, nil
}

// checkValue checks a value of one of the flag package's own types.
func checkValue(f Flag, v string) error {
	if strings.Contains(v, "$") {
		return nil
	}
	var err error
	switch f.Type {
	case "duration":
		_, err = time.ParseDuration(v)
	case "int":
		_, err = strconv.ParseInt(v, 0, 64)
	case "uint":
		_, err = strconv.ParseUint(v, 0, 64)
	case "float":
		_, err = strconv.ParseFloat(v, 64)
	}
	return err
}

// parseGNU parses args as getopt_long does, with the parser `wirespeed
// sum` uses.
func (fs *FlagSet) parseGNU(args []string) (flags []Arg, positional []string, err error) {
	given, positional, err := getopt.Parse(fs.GNU, args)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", fs.Command, err)
	}
	for _, g := range given {
		flags = append(flags, Arg{Name: g.Name, Value: g.Value, HasValue: g.HasValue, First: g.First, Last: g.Last})
	}
	return flags, positional, nil
}
