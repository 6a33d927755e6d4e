package doccheck

import (
	"fmt"
	"strings"
)

// A Word is one word of a shell command line.
type Word struct {
	Raw        string // as written, quotes included
	Val        string // without its quotes (expansions such as $(...) left as written)
	Start, End int    // Raw's place in the line
}

// A Command is a simple command: its words, redirections left out.
type Command struct {
	Words []Word
	// Op is the operator that ends it: "", "|", "||", "&&", ";" or "&".
	Op string
}

// A Line is one logical line of a shell block: continuation lines
// joined, and its commands.
type Line struct {
	Text     string // the joined line
	Num      int    // its first line in the block, from 1
	Commands []Command
}

// Background reports whether the line ends in "&": its last command runs
// in the background.
func (l Line) Background() bool {
	return len(l.Commands) > 0 && l.Commands[len(l.Commands)-1].Op == "&"
}

// ParseShell splits a shell block into logical lines and their commands.
// It knows what the docs use: words, '...' and "..." quotes, $(...) and
// <(...) inside or as words, the operators | || && ; &, redirections,
// subshell parentheses (dropped) and comments.
func ParseShell(text string) ([]Line, error) {
	var lines []Line
	raw := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(raw); i++ {
		num := i + 1
		s := raw[i]
		for strings.HasSuffix(s, "\\") && i+1 < len(raw) {
			i++
			s = s[:len(s)-1] + " " + strings.TrimLeft(raw[i], " \t")
		}
		cmds, err := parseLine(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", num, err)
		}
		if len(cmds) > 0 {
			lines = append(lines, Line{Text: s, Num: num, Commands: cmds})
		}
	}
	return lines, nil
}

func parseLine(s string) ([]Command, error) {
	var cmds []Command
	var cur Command
	redirect := false // the next word is a redirection's target
	end := func(op string) {
		if len(cur.Words) > 0 || op != "" {
			cur.Op = op
			if len(cur.Words) > 0 {
				cmds = append(cmds, cur)
			}
		}
		cur = Command{}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#':
			i = len(s)
			continue
		case c == '(' || c == ')':
			i++
			continue
		case strings.HasPrefix(s[i:], "||"), strings.HasPrefix(s[i:], "&&"):
			end(s[i : i+2])
			i += 2
			continue
		case c == '|' || c == ';' || c == '&':
			end(string(c))
			i++
			continue
		}
		// A redirection: [n]>, >>, <, >&n, n>&m.
		if j := redirectEnd(s, i); j > i {
			redirect = !strings.HasSuffix(s[i:j], "&") && !isDigitsAfterAmp(s[i:j])
			i = j
			continue
		}
		w, j, err := scanWord(s, i)
		if err != nil {
			return nil, err
		}
		i = j
		if redirect {
			redirect = false
			continue
		}
		cur.Words = append(cur.Words, w)
	}
	end("")
	return cmds, nil
}

// redirectEnd returns the end of the redirection operator at s[i:], or i.
func redirectEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j >= len(s) || (s[j] != '>' && s[j] != '<') {
		return i
	}
	if s[j] == '<' && j+1 < len(s) && s[j+1] == '(' {
		return i // process substitution: a word
	}
	j++
	if j < len(s) && (s[j] == '>' || s[j] == '&') {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	}
	return j
}

func isDigitsAfterAmp(op string) bool {
	k := strings.IndexByte(op, '&')
	return k >= 0 && k < len(op)-1
}

// scanWord scans the word at s[i:] and returns it and its end.
func scanWord(s string, i int) (Word, int, error) {
	start := i
	var val strings.Builder
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '|' || c == ';' || c == '&' || c == ')':
			if c == '&' && i > start && (s[i-1] == '>' || s[i-1] == '<') {
				val.WriteByte(c)
				i++
				continue
			}
			return Word{Raw: s[start:i], Val: val.String(), Start: start, End: i}, i, nil
		case c == '\'':
			k := strings.IndexByte(s[i+1:], '\'')
			if k < 0 {
				return Word{}, 0, fmt.Errorf("unclosed ' at %d", i)
			}
			val.WriteString(s[i+1 : i+1+k])
			i += k + 2
		case c == '"':
			k := i + 1
			for k < len(s) && s[k] != '"' {
				if s[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(s) {
				return Word{}, 0, fmt.Errorf("unclosed \" at %d", i)
			}
			val.WriteString(s[i+1 : k])
			i = k + 1
		case (c == '$' || c == '<') && i+1 < len(s) && s[i+1] == '(':
			k, depth := i+2, 1
			for k < len(s) && depth > 0 {
				switch s[k] {
				case '(':
					depth++
				case ')':
					depth--
				}
				k++
			}
			if depth > 0 {
				return Word{}, 0, fmt.Errorf("unclosed %c( at %d", c, i)
			}
			val.WriteString(s[i:k])
			i = k
		case c == '\\' && i+1 < len(s):
			val.WriteByte(s[i+1])
			i += 2
		default:
			val.WriteByte(c)
			i++
		}
	}
	return Word{Raw: s[start:i], Val: val.String(), Start: start, End: i}, i, nil
}

// Quote returns s as one shell word.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// wrapperArgs reports whether name is a command that runs the rest of its
// words as a command (taskset -c CPUS, flock FILE, time, ...), and how many
// words of its own follow its name.
func wrapperArgs(name string) (int, bool) {
	switch name {
	case "taskset":
		return 2, true
	case "flock":
		return 1, true
	case "time", "nice", "sudo", "exec", "do", "then", "else":
		return 0, true
	}
	return 0, false
}

// Inner returns the words of the command that c runs: without leading
// variable assignments, wrappers (taskset -c N, flock FILE, ip netns exec
// NS, time, ...) and with a leading "go run ./cmd/wirespeed" as one word,
// "wirespeed". env holds the assignments, and start is the index in
// c.Words of the inner command's first word.
func Inner(c Command) (words []Word, env []string, start int) {
	w := c.Words
	for len(w) > 0 {
		name := w[0].Val
		if k := strings.IndexByte(name, '='); k > 0 && !strings.HasPrefix(name, "-") && isIdent(name[:k]) {
			env = append(env, name)
			w = w[1:]
			continue
		}
		if n, ok := wrapperArgs(name); ok && len(w) > n+1 {
			w = w[1+n:]
			continue
		}
		if name == "ip" && len(w) > 4 && w[1].Val == "netns" && w[2].Val == "exec" {
			w = w[4:]
			continue
		}
		break
	}
	start = len(c.Words) - len(w)
	if len(w) >= 3 && w[0].Val == "go" && w[1].Val == "run" && w[2].Val == "./cmd/wirespeed" {
		ws := w[2]
		ws.Val = "wirespeed"
		w = append([]Word{ws}, w[3:]...)
	}
	return w, env, start
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Vals returns the words' values.
func Vals(ws []Word) []string {
	v := make([]string, len(ws))
	for i, w := range ws {
		v[i] = w.Val
	}
	return v
}
