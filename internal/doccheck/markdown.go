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
}

// Where names the block's place for messages: FILE:LINE.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var parseOnlyRE = regexp.MustCompile(`^<!-- doccheck: parse-only \((.+)\) -->$`)

// Blocks returns the fenced code blocks of the Markdown text md, read from
// the file named file. It fails on a fence left open, on a doccheck
// comment that does not come right before a fence or is malformed, and on
// an indented code block (a line indented by 4 spaces or a tab after a
// blank line, outside fences): commands must be fenced so that none escapes
// the checks.
func Blocks(file, md string) ([]Block, error) {
	var blocks []Block
	lines := strings.Split(md, "\n")
	var cur *Block
	var fence string
	pending := -1 // line index of a doccheck comment waiting for its fence
	reason := ""
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
				cur.ParseOnly, cur.Reason = true, reason
				pending = -1
			}
			continue
		}
		if strings.HasPrefix(trimmed, "<!-- doccheck") {
			m := parseOnlyRE.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: malformed doccheck comment %q (want <!-- doccheck: parse-only (REASON) -->)", file, i+1, trimmed)
			}
			pending, reason = i, m[1]
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
