package doccheck

import (
	"fmt"
	"regexp"
	"strings"
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

// Blocks returns the fenced code blocks of the Markdown text md, read from
// the file named file. Lines of doccheck comments right before a fence
// mark its block (see Block). It fails on a fence left open, on a doccheck
// comment that does not come right before a fence or is malformed, and on
// an indented code block (a line indented by 4 spaces or a tab after a
// blank line, outside fences): commands must be fenced so that none escapes
// the checks.
func Blocks(file, md string) ([]Block, error) {
	var blocks []Block
	lines := strings.Split(md, "\n")
	var cur *Block
	var fence string
	pending := -1   // line index of the last doccheck comment waiting for its fence
	var marks Block // what the comments waiting for the fence say
	prevBlank := true
	for i, line := range lines {
		if cur != nil {
			if strings.TrimSpace(line) == fence {
				blocks = append(blocks, *cur)
				cur = nil
				prevBlank = false
				continue
			}
			cur.Text += line + "\n"
			continue
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = line[:3]
			cur = &Block{File: file, Line: i + 1, Lang: strings.TrimSpace(line[3:])}
			if pending >= 0 {
				marks.File, marks.Line, marks.Lang = cur.File, cur.Line, cur.Lang
				*cur = marks
				marks = Block{}
				pending = -1
			}
			continue
		}
		if strings.HasPrefix(trimmed, "<!-- doccheck") {
			m := markerRE.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: malformed doccheck comment %q (want <!-- doccheck: parse-only|env|netns|columns (...) -->)", file, i+1, trimmed)
			}
			switch m[1] {
			case "parse-only":
				marks.ParseOnly, marks.Reason = true, m[2]
			case "netns":
				marks.Netns, marks.Reason = true, m[2]
			case "columns":
				marks.Columns, marks.Reason = true, m[2]
			case "env":
				for _, w := range strings.Fields(m[2]) {
					if !envRE.MatchString(w) {
						return nil, fmt.Errorf("%s:%d: doccheck env: %q is not NAME=VALUE", file, i+1, w)
					}
					marks.Env = append(marks.Env, w)
				}
			}
			if marks.ParseOnly && (marks.Netns || marks.Env != nil) {
				return nil, fmt.Errorf("%s:%d: a parse-only block does not run: no env or netns for it", file, i+1)
			}
			pending = i
			continue
		}
		if pending >= 0 && trimmed != "" {
			return nil, fmt.Errorf("%s:%d: doccheck comment not followed by a fenced block", file, pending+1)
		}
		if prevBlank && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")) && trimmed != "" {
			return nil, fmt.Errorf("%s:%d: indented code block; fence it (```sh for commands, ```text for output)", file, i+1)
		}
		prevBlank = trimmed == ""
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: code block not closed", file, cur.Line)
	}
	if pending >= 0 {
		return nil, fmt.Errorf("%s:%d: doccheck comment not followed by a fenced block", file, pending+1)
	}
	return blocks, nil
}

// Links returns the targets of the Markdown links [text](target) in md
// that are not URLs with a scheme, and the lines they are on.
func Links(md string) (targets []string, lines []int) {
	for i, line := range strings.Split(md, "\n") {
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			t := m[1]
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			targets, lines = append(targets, t), append(lines, i+1)
		}
	}
	return targets, lines
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Anchors returns the anchors GitHub gives the headings of md: the text
// in lower case, with spaces turned to "-" and punctuation other than "-"
// and "_" dropped; a repeated one gets "-1", "-2", ...
func Anchors(md string) map[string]bool {
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n := 1; anchors[a]; n++ {
			a = fmt.Sprintf("%s-%d", b.String(), n)
		}
		anchors[a] = true
	}
	return anchors
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
