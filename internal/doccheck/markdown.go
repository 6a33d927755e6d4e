package doccheck

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// A Block is a fenced code block of a Markdown file.
type Block struct {
	File string // the file's name, for messages
	Line int    // the line of the opening fence, from 1
	Lang string // the fence's info string ("sh", "go", "text", ...)
	Text string // the block's lines, each ending in "\n"
	// ParseOnly is set by a line "<!-- doccheck: parse-only (REASON) -->"
	// just before the fence: the block's commands are checked, not run.
	ParseOnly bool
	Reason    string
	// Env holds the NAME=VALUE words of a line "<!-- doccheck: env
	// (NAME=VALUE ...) -->" before the fence: the block runs with them in
	// its environment, for the quick mode its text states.
	Env []string
	// Netns is set by a line "<!-- doccheck: netns (REASON) -->" before
	// the fence: the block runs as root in a network and a mount namespace
	// of its own, so that the network namespaces it makes are its own and
	// end with it.
	Netns bool
	// Columns is set by a line "<!-- doccheck: columns (REASON) -->"
	// before a text block: its header lines (see HeaderRows) must be
	// among what the file's shell blocks print in quick mode,
	// so that a table cannot drift in format from the command that makes
	// it.
	Columns bool
}

// Where names the block's place for messages: FILE:LINE.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var (
	markerRE = regexp.MustCompile(`^<!-- doccheck: (parse-only|env|netns|columns) \((.+)\) -->$`)
	envRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
)

// gfm parses Markdown as GitHub renders it: CommonMark and GitHub's
// extensions (tables, strikethrough, task lists, bare URLs).
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// A source is a Markdown text, parsed.
type source struct {
	file  string
	src   []byte
	doc   ast.Node
	lines []int // the offset of each line's start
}

func parse(file, md string) *source {
	s := &source{file: file, src: []byte(md), lines: []int{0}}
	for i, c := range s.src {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	s.doc = gfm.Parse(text.NewReader(s.src))
	return s
}

// line returns the line, from 1, of the byte at offset off.
func (s *source) line(off int) int {
	n, found := slices.BinarySearch(s.lines, off)
	if found {
		n++
	}
	return n
}

// pos returns the offset where n starts: its own position, or its first
// line's, or (for an inline node with neither) its parent's.
func (s *source) pos(n ast.Node) int {
	for ; n != nil; n = n.Parent() {
		if p := n.Pos(); p >= 0 {
			return p
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
	}
	return 0
}

// lineText returns line n (from 1) of the source, without its newline;
// "" past the end.
func (s *source) lineText(n int) (string, bool) {
	if n < 1 || n > len(s.lines) || n == len(s.lines) && s.lines[n-1] == len(s.src) {
		return "", false
	}
	end := len(s.src)
	if n < len(s.lines) {
		end = s.lines[n] - 1
	}
	return string(s.src[s.lines[n-1]:end]), true
}

// markerLines returns the lines of an HTML block that are doccheck
// comments.
func (s *source) markerLines(h *ast.HTMLBlock) []string {
	var raw []byte
	for i := range h.Lines().Len() {
		seg := h.Lines().At(i)
		raw = append(raw, seg.Value(s.src)...)
	}
	if h.HasClosure() {
		raw = append(raw, h.ClosureLine.Value(s.src)...)
	}
	var marks []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "<!-- doccheck") {
			marks = append(marks, l)
		}
	}
	return marks
}

// Blocks returns the fenced code blocks of the Markdown text md, read from
// the file named file, wherever they stand: at the top, in list items, in
// block quotes. Lines of doccheck comments right before a fence (HTML
// blocks of their own, its previous siblings) mark its block (see Block).
// It fails on a fence left open, on a doccheck comment that does not come
// right before a fence, is malformed or stands inside a paragraph, and on
// an indented code block: commands must be fenced so that none escapes the
// checks.
func Blocks(file, md string) ([]Block, error) {
	s := parse(file, md)
	var blocks []Block
	var pending ast.Node // the last doccheck comment waiting for its fence
	var marks Block      // what the comments waiting for the fence say
	err := ast.Walk(s.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Kind() == ast.KindDocument {
			return ast.WalkContinue, nil
		}
		h, _ := n.(*ast.HTMLBlock)
		var ml []string
		if h != nil {
			ml = s.markerLines(h)
		}
		if pending != nil {
			_, fenced := n.(*ast.FencedCodeBlock)
			if n != pending.NextSibling() || !fenced && ml == nil {
				return ast.WalkStop, fmt.Errorf("%s:%d: doccheck comment not followed by a fenced block", file, s.line(s.pos(pending)))
			}
		}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			for _, m := range ml {
				if err := marks.mark(m); err != nil {
					return ast.WalkStop, fmt.Errorf("%s:%d: %v", file, s.line(s.pos(n)), err)
				}
				pending = n
			}
		case *ast.RawHTML:
			for i := range n.Segments.Len() {
				seg := n.Segments.At(i)
				if bytes.Contains(seg.Value(s.src), []byte("<!-- doccheck")) {
					return ast.WalkStop, fmt.Errorf("%s:%d: doccheck comment inside a paragraph; give it a line of its own right before the fence", file, s.line(seg.Start))
				}
			}
		case *ast.CodeBlock:
			return ast.WalkStop, fmt.Errorf("%s:%d: indented code block; fence it (```sh for commands, ```text for output)", file, s.line(s.pos(n)))
		case *ast.FencedCodeBlock:
			b, err := s.fenced(n)
			if err != nil {
				return ast.WalkStop, err
			}
			if pending != nil {
				marks.File, marks.Line, marks.Lang, marks.Text = b.File, b.Line, b.Lang, b.Text
				b, marks, pending = marks, Block{}, nil
			}
			blocks = append(blocks, b)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, fmt.Errorf("%s:%d: doccheck comment not followed by a fenced block", file, s.line(s.pos(pending)))
	}
	return blocks, nil
}

// mark adds what the doccheck comment m says to b.
func (b *Block) mark(m string) error {
	sub := markerRE.FindStringSubmatch(m)
	if sub == nil {
		return fmt.Errorf("malformed doccheck comment %q (want <!-- doccheck: parse-only|env|netns|columns (...) -->)", m)
	}
	switch sub[1] {
	case "parse-only":
		b.ParseOnly, b.Reason = true, sub[2]
	case "netns":
		b.Netns, b.Reason = true, sub[2]
	case "columns":
		b.Columns, b.Reason = true, sub[2]
	case "env":
		for _, w := range strings.Fields(sub[2]) {
			if !envRE.MatchString(w) {
				return fmt.Errorf("doccheck env: %q is not NAME=VALUE", w)
			}
			b.Env = append(b.Env, w)
		}
	}
	if b.ParseOnly && (b.Netns || b.Env != nil) {
		return fmt.Errorf("a parse-only block does not run: no env or netns for it")
	}
	return nil
}

// fenced returns the Block of a fenced code block, and fails if its fence
// is left open (the parser ends such a block with its container).
func (s *source) fenced(n *ast.FencedCodeBlock) (Block, error) {
	open := s.pos(n)
	b := Block{File: s.file, Line: s.line(open)}
	if n.Info != nil {
		b.Lang = string(bytes.TrimSpace(n.Info.Segment.Value(s.src)))
	}
	var sb strings.Builder
	last := b.Line
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		v := seg.Value(s.src)
		sb.Write(v)
		if !bytes.HasSuffix(v, []byte("\n")) {
			sb.WriteByte('\n')
		}
		last = s.line(seg.Start)
	}
	b.Text = sb.String()
	// The closing fence: the opening one's character, at least as many,
	// on the line after the last, behind the container's indentation or
	// quote marks.
	fence := s.src[open:]
	k := 0
	for k < len(fence) && fence[k] == fence[0] {
		k++
	}
	closing, ok := s.lineText(last + 1)
	closing = strings.TrimLeft(closing, " \t>")
	rest := strings.TrimLeft(closing, string(fence[:1]))
	if !ok || len(closing)-len(rest) < k || strings.TrimSpace(rest) != "" {
		return Block{}, fmt.Errorf("%s:%d: code block not closed", s.file, b.Line)
	}
	return b, nil
}

// Links returns the targets of the links and images of the Markdown text
// md (inline, reference-style, with a title or not) that are not URLs
// with a scheme, and the lines they are on.
func Links(md string) (targets []string, lines []int) {
	s := parse("", md)
	ast.Walk(s.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest string
		switch n := n.(type) {
		case *ast.Link:
			dest = string(n.Destination)
		case *ast.Image:
			dest = string(n.Destination)
		default:
			return ast.WalkContinue, nil
		}
		if u, err := url.Parse(dest); err == nil && u.Scheme != "" || strings.Contains(dest, "://") {
			return ast.WalkContinue, nil
		}
		targets, lines = append(targets, dest), append(lines, s.line(s.pos(n)))
		return ast.WalkContinue, nil
	})
	return targets, lines
}

// Anchors returns the anchors GitHub gives the headings of md (ATX and
// setext): their text in lower case, with spaces turned to "-" and
// punctuation other than "-" and "_" dropped; a repeated one gets "-1",
// "-2", ...
func Anchors(md string) map[string]bool {
	s := parse("", md)
	anchors := map[string]bool{}
	ast.Walk(s.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(s.plain(h))) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		for k := 1; anchors[a]; k++ {
			a = fmt.Sprintf("%s-%d", b.String(), k)
		}
		anchors[a] = true
		return ast.WalkSkipChildren, nil
	})
	return anchors
}

// plain returns the text of an inline node's children, markup left out.
func (s *source) plain(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(s.src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(s.src))
		case *ast.RawHTML:
		default:
			b.WriteString(s.plain(c))
		}
	}
	return b.String()
}

// HeaderRows returns the lines of text that name a table's columns or
// introduce it, with their spaces collapsed: lines of three words or more,
// none of which starts with a digit or is "-" (a table's rows hold
// figures, its headers none).
func HeaderRows(text string) []string {
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		header := true
		for _, w := range f {
			if w == "-" || w[0] >= '0' && w[0] <= '9' {
				header = false
				break
			}
		}
		if header {
			rows = append(rows, strings.Join(f, " "))
		}
	}
	return rows
}
