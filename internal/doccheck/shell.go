package doccheck

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A Word is one word of a shell command.
type Word struct {
	Raw        string // as written, quotes included
	Val        string // without its quotes (expansions such as $(...) left as written)
	Start, End int    // Raw's place in the text parsed
}

// A Command is a simple command: its words (leading assignments
// included), redirections left out.
type Command struct {
	Words []Word
}

// A Pipeline is the commands of one pipeline (a | b | c), or one command
// on its own, and its place in the text parsed.
type Pipeline struct {
	Commands   []Command
	Start, End int
}

// A Line is one statement at the top of a shell block: a pipeline, a list
// (a && b), a loop, a subshell, ... Its pipelines are the simple commands
// it runs, wherever they stand: in a loop's body, in $(...) and <(...),
// in a here-document's expansions.
type Line struct {
	Text       string // the statement's text, to the end of its last line (a here-document's body included)
	Num        int    // its first line in the block, from 1
	Start, End int    // Text's place in the block
	Background bool   // the statement ends in "&"
	Pipelines  []Pipeline
}

// Commands returns the simple commands of the line, in the order they
// stand.
func (l Line) Commands() []Command {
	var cs []Command
	for _, p := range l.Pipelines {
		cs = append(cs, p.Commands...)
	}
	return cs
}

// ParseShell parses a shell block as bash does and returns its
// statements.
func ParseShell(text string) ([]Line, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return nil, err
	}
	var lines []Line
	for _, st := range f.Stmts {
		w := walker{src: text}
		w.stmt(st, nil)
		end := int(st.End().Offset())
		syntax.Walk(st, func(n syntax.Node) bool {
			if n != nil {
				end = max(end, int(n.End().Offset()))
			}
			return true
		})
		if k := strings.IndexByte(text[end:], '\n'); k >= 0 {
			end += k
		} else {
			end = len(text)
		}
		l := Line{Start: int(st.Pos().Offset()), End: end, Num: int(st.Pos().Line()), Background: st.Background}
		l.Text = text[l.Start:l.End]
		for _, p := range w.pipes {
			l.Pipelines = append(l.Pipelines, *p)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// A walker gathers the pipelines of a statement.
type walker struct {
	src   string
	pipes []*Pipeline
}

func (w *walker) stmts(ss []*syntax.Stmt, cur *Pipeline) {
	for _, s := range ss {
		w.stmt(s, cur)
	}
}

// stmt adds the commands of s to cur, the pipeline s is part of, or as
// pipelines of their own if cur is nil.
func (w *walker) stmt(s *syntax.Stmt, cur *Pipeline) {
	start := func(n syntax.Node) *Pipeline {
		if cur == nil {
			cur = &Pipeline{Start: int(n.Pos().Offset()), End: int(n.End().Offset())}
			w.pipes = append(w.pipes, cur)
		}
		return cur
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		// The pipeline first: the commands of the words' substitutions
		// follow it.
		p := start(c)
		var cmd Command
		for _, a := range c.Assigns {
			cmd.Words = append(cmd.Words, w.assign(a))
		}
		for _, a := range c.Args {
			cmd.Words = append(cmd.Words, w.word(a))
		}
		p.Commands = append(p.Commands, cmd)
	case *syntax.DeclClause:
		p := start(c)
		cmd := Command{Words: []Word{w.word(&syntax.Word{Parts: []syntax.WordPart{c.Variant}})}}
		for _, a := range c.Args {
			cmd.Words = append(cmd.Words, w.assign(a))
		}
		p.Commands = append(p.Commands, cmd)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			start(c)
		}
		w.stmt(c.X, cur)
		w.stmt(c.Y, cur)
	case *syntax.Subshell:
		w.stmts(c.Stmts, cur)
	case *syntax.Block:
		w.stmts(c.Stmts, cur)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			w.stmts(c.Cond, cur)
			w.stmts(c.Then, cur)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, cur)
		w.stmts(c.Do, cur)
	case *syntax.ForClause:
		w.substs(c.Loop)
		w.stmts(c.Do, cur)
	case *syntax.CaseClause:
		w.substs(c.Word)
		for _, it := range c.Items {
			w.stmts(it.Stmts, cur)
		}
	case *syntax.FuncDecl:
		w.stmt(c.Body, cur)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, cur)
		}
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, cur)
	case nil:
	default: // [[ ]], (( )), let: their substitutions
		w.substs(c)
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			w.substs(r.Word)
		}
		if r.Hdoc != nil {
			w.substs(r.Hdoc) // a quoted delimiter's body has none
		}
	}
}

// substs adds the commands of the command and process substitutions in
// n as pipelines of their own.
func (w *walker) substs(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, nil)
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, nil)
			return false
		}
		return true
	})
}

func (w *walker) text(n syntax.Node) string { return w.src[n.Pos().Offset():n.End().Offset()] }

// word returns a word of a command, and adds the commands of its
// substitutions.
func (w *walker) word(x *syntax.Word) Word {
	w.substs(x)
	var b strings.Builder
	for _, p := range x.Parts {
		w.part(&b, p, false)
	}
	return Word{Raw: w.text(x), Val: b.String(), Start: int(x.Pos().Offset()), End: int(x.End().Offset())}
}

// assign returns an assignment NAME=VALUE (or a declaration's NAME) as a
// word: VALUE without its quotes; an array or indexed one as written.
func (w *walker) assign(a *syntax.Assign) Word {
	word := Word{Raw: w.text(a), Val: w.text(a), Start: int(a.Pos().Offset()), End: int(a.End().Offset())}
	w.substs(a)
	if a.Name == nil || a.Value == nil || a.Index != nil || a.Array != nil {
		return word
	}
	var b strings.Builder
	b.WriteString(a.Name.Value)
	if a.Append {
		b.WriteByte('+')
	}
	b.WriteByte('=')
	for _, p := range a.Value.Parts {
		w.part(&b, p, false)
	}
	word.Val = b.String()
	return word
}

// part writes a word part without its quotes: literal text unescaped,
// expansions as written.
func (w *walker) part(b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(w.text(p)) // $'...': its escapes left as written
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			w.part(b, q, true)
		}
	default:
		b.WriteString(w.text(p))
	}
}

// unescape removes the backslashes of literal text: before any character
// outside double quotes, before $ ` " \ and a newline inside them; a
// backslash and a newline go together.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) || quoted && !strings.ContainsRune("$`\"\\\n", rune(s[i+1])) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] != '\n' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
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
	case "nice", "sudo", "exec":
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
