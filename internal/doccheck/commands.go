package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Specs are the flag sets of the wirespeed command's subcommands, read
// from the usage messages of a built binary.
type Specs struct {
	Sets   map[string]*FlagSet // by command: "smtp-sink", "bench net", ...
	Suites []string            // the suites `wirespeed bench` takes
}

// subcommands returns the subcommands of a wirespeed command.
func subcommands(cmd string) []string {
	switch cmd {
	case "bench":
		return []string{"net", "smtp", "tlspipe"}
	case "tcpperf":
		return []string{"merge"}
	}
	return nil
}

var suitesRE = regexp.MustCompile(`(?m)^suites: (.+)$`)

// LoadSpecs runs the wirespeed binary bin for its commands (`help`) and
// for each command's usage message (-help; --help for sum), and reads
// their flags.
func LoadSpecs(bin string) (*Specs, error) {
	out, _ := exec.Command(bin, "help").CombinedOutput()
	var cmds []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	listing := false
	for sc.Scan() {
		line := sc.Text()
		if line == "commands:" {
			listing = true
			continue
		}
		if f := strings.Fields(line); listing && len(f) > 0 && strings.HasPrefix(line, "  ") {
			cmds = append(cmds, f[0])
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("%s help lists no commands:\n%s", bin, out)
	}
	s := &Specs{Sets: map[string]*FlagSet{}}
	for _, c := range cmds {
		names := []string{c}
		for _, sub := range subcommands(c) {
			names = append(names, c+" "+sub)
		}
		for _, name := range names {
			help := "-help"
			if name == "sum" {
				help = "--help"
			}
			args := append(strings.Fields(name), help)
			usage, _ := exec.Command(bin, args...).CombinedOutput()
			var fs *FlagSet
			var err error
			if name == "sum" {
				fs, err = ParseGNUHelp(name, string(usage))
			} else {
				fs, err = ParseGoUsage(name, string(usage))
			}
			if err != nil {
				return nil, err
			}
			s.Sets[name] = fs
			if name == "bench" {
				m := suitesRE.FindSubmatch(usage)
				if m == nil {
					return nil, fmt.Errorf("bench -help names no suites:\n%s", usage)
				}
				s.Suites = strings.Fields(string(m[1]))
			}
		}
	}
	return s, nil
}

// Resolve splits the words of a wirespeed invocation (words[0] is the
// command) into the command's name ("smtp-sink", "bench net", ...) and its
// arguments. It fails on an unknown command.
func (s *Specs) Resolve(words []string) (cmd string, args []string, err error) {
	if len(words) < 2 {
		return "", nil, fmt.Errorf("wirespeed without a command")
	}
	cmd, args = words[1], words[2:]
	if _, ok := s.Sets[cmd]; !ok {
		return "", nil, fmt.Errorf("wirespeed: unknown command %q", cmd)
	}
	if len(args) > 0 {
		if _, ok := s.Sets[cmd+" "+args[0]]; ok {
			cmd, args = cmd+" "+args[0], args[1:]
		}
	}
	return cmd, args, nil
}

// Check parses the arguments of a wirespeed invocation against its
// command's flags, and checks its positional arguments.
func (s *Specs) Check(words []string) error {
	cmd, args, err := s.Resolve(words)
	if err != nil {
		return err
	}
	flags, pos, err := s.Sets[cmd].Parse(args)
	if err != nil {
		return err
	}
	switch cmd {
	case "smtp-source":
		if len(pos) != 1 {
			return fmt.Errorf("smtp-source takes one address, got %q", pos)
		}
	case "smtp-sink":
		if len(pos) > 2 {
			return fmt.Errorf("smtp-sink takes an address and a backlog at most after its flags, got %q", pos)
		}
		if len(pos) > 0 && slices.ContainsFunc(flags, func(a Arg) bool { return a.Name == "addr" }) {
			return fmt.Errorf("smtp-sink: an address both in -addr and after the flags (%q)", pos[0])
		}
		if len(pos) == 2 {
			if n, err := strconv.Atoi(pos[1]); err != nil || n <= 0 {
				return fmt.Errorf("smtp-sink: backlog %q: want a positive number", pos[1])
			}
		}
	case "tcpperf merge":
		if len(pos) == 0 {
			return fmt.Errorf("tcpperf merge needs log files")
		}
	case "bench":
		for _, p := range pos {
			if !slices.Contains(s.Suites, p) {
				return fmt.Errorf("bench: no suite %q (suites: %s)", p, strings.Join(s.Suites, " "))
			}
		}
	case "sum":
	default:
		if len(pos) > 0 {
			return fmt.Errorf("%s takes no arguments after its flags, got %q", cmd, pos)
		}
	}
	return nil
}

// A rule changes one flag in quick mode.
type rule struct {
	name string
	// set returns the flag's quick value from its value as written ("" if
	// not given) and whether it was given; drop removes the flag.
	set  func(v string, given bool) string
	drop bool
}

func fixed(v string) func(string, bool) string { return func(string, bool) string { return v } }

// atMost caps a numeric value at max (a value not given becomes max).
func atMost(max float64) func(string, bool) string {
	return func(v string, given bool) string {
		if f, err := strconv.ParseFloat(v, 64); given && err == nil && f <= max {
			return v
		}
		return strconv.FormatFloat(max, 'f', -1, 64)
	}
}

// durationAtMost caps a duration at max (a value not given becomes max;
// 0, which turns a phase off, stays 0).
func durationAtMost(max time.Duration) func(string, bool) string {
	return func(v string, given bool) string {
		if d, err := time.ParseDuration(v); given && err == nil && d <= max {
			return v
		}
		return max.String()
	}
}

// quickRules returns how quick mode shortens a command's run: less time,
// fewer messages and connections, the same paths through the code.
func quickRules(cmd string) []rule {
	switch cmd {
	case "bench":
		return []rule{{name: "long", drop: true}, {name: "benchtime", set: fixed("1ms")}}
	case "bench net":
		return []rule{{name: "duration", set: fixed("200ms")}, {name: "warmup", set: fixed("100ms")},
			{name: "points", set: fixed("low=echo/10/1000/0")}, {name: "step", set: fixed("")},
			{name: "step-runs", set: fixed("1")}, {name: "overload", set: durationAtMost(200 * time.Millisecond)},
			{name: "sockperf", set: fixed("false")}}
	case "bench smtp":
		return []rule{{name: "quick", set: fixed("true")}, {name: "count", set: fixed("1")}}
	case "tcpperf":
		return []rule{{name: "duration", set: fixed("300ms")}, {name: "warmup", set: fixed("100ms")},
			{name: "conns", set: atMost(100)}, {name: "qps", set: atMost(5000)}}
	case "smtp-source":
		return []rule{{name: "m", set: atMost(20)}, {name: "s", set: atMost(4)}}
	}
	return nil
}

// Quick returns the words of a wirespeed invocation (words[0] is the
// command) for quick mode: durations, message counts and connections cut
// down by quickRules, flags added before the positional arguments. orig[k]
// is the index in words of out[k] when that is a word as given, else -1.
func (s *Specs) Quick(words []string) (out []string, orig []int, err error) {
	cmd, args, err := s.Resolve(words)
	if err != nil {
		return nil, nil, err
	}
	fs := s.Sets[cmd]
	flags, pos, err := fs.Parse(args)
	if err != nil {
		return nil, nil, err
	}
	rules := quickRules(cmd)
	if len(rules) == 0 {
		for i := range words {
			out, orig = append(out, words[i]), append(orig, i)
		}
		return out, orig, nil
	}
	base := len(words) - len(args)
	keep := func(i int) { out, orig = append(out, words[i]), append(orig, i) }
	add := func(w string) { out, orig = append(out, w), append(orig, -1) }
	for i := 0; i < base; i++ {
		keep(i)
	}
	done := map[string]bool{}
	for _, f := range flags {
		k := slices.IndexFunc(rules, func(r rule) bool { return r.name == f.Name })
		switch {
		case k < 0:
			for i := f.First; i <= f.Last; i++ {
				keep(base + i)
			}
		case rules[k].drop:
		default:
			add("-" + f.Name + "=" + rules[k].set(f.Value, f.HasValue))
		}
		done[f.Name] = true
	}
	for _, r := range rules {
		if !done[r.name] && !r.drop {
			if _, ok := fs.Flags[r.name]; !ok {
				return nil, nil, fmt.Errorf("quick mode of %s: the command has no flag -%s", cmd, r.name)
			}
			add("-" + r.name + "=" + r.set("", false))
		}
	}
	for i := len(words) - len(pos); i < len(words); i++ {
		keep(i)
	}
	return out, orig, nil
}
