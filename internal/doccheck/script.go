package doccheck

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// isWirespeed reports whether a command's first word runs wirespeed.
func isWirespeed(name string) bool {
	return name == "wirespeed" || strings.HasSuffix(name, "/wirespeed")
}

// builtin reports whether name is a shell builtin, or a program every
// Linux system has, which blocks run without checking. (Keywords, for,
// if, while and the rest, are the parser's, never a command's name.)
func builtin(name string) bool {
	switch name {
	case "cd", "printf", "echo", "ulimit", "true", "false", ":",
		"[", "test", "export", "set", "kill", "wait", "sleep", "mkdir", "cat", "head", "seq", "cmp", "rm", "cp":
		return true
	}
	return false
}

// addrRE matches an IPv4 address with a port, as the docs give servers'.
var addrRE = regexp.MustCompile(`\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})\b`)

// unixRE matches a Unix socket's address, unix:PATH, as the docs give
// servers' (-addr unix:PATH).
var unixRE = regexp.MustCompile(`\bunix:([^\s'"]+)`)

// Command checks: every command of every block.

// CheckBlock checks the commands of a shell block without running them:
// each wirespeed invocation against its command's flags, each `go test`
// against the repository at root (its packages, and that its -bench and
// -fuzz patterns name tests that exist), each `go install` and `go get`
// against the module, and `bash .ci/run`. Commands given to hyperfine, in
// quotes, are checked as well.
func (s *Specs) CheckBlock(b Block, root, module string) []error {
	lines, err := ParseShell(b.Text)
	if err != nil {
		return []error{fmt.Errorf("%s: %v", b.Where(), err)}
	}
	var errs []error
	for _, l := range lines {
		for _, err := range s.checkLine(l, root, module) {
			errs = append(errs, fmt.Errorf("%s+%d: %v", b.Where(), l.Num, err))
		}
	}
	return errs
}

func (s *Specs) checkLine(l Line, root, module string) []error {
	var errs []error
	dir := ""
	for _, c := range l.Commands() {
		w, _, _ := Inner(c)
		if len(w) == 0 {
			continue
		}
		v := Vals(w)
		switch {
		case isWirespeed(v[0]):
			if err := s.Check(v); err != nil {
				errs = append(errs, err)
			}
		case v[0] == "cd" && len(v) == 2:
			dir = filepath.Join(dir, v[1])
		case v[0] == "go" && len(v) > 1 && v[1] == "test":
			g, err := ParseGoTest(v[2:], dir)
			if err == nil {
				err = g.Check(root)
			}
			if err != nil {
				errs = append(errs, err)
			}
		case v[0] == "go" && len(v) > 2 && (v[1] == "install" || v[1] == "get"):
			for _, p := range v[2:] {
				path, _, _ := strings.Cut(p, "@")
				rel, ok := strings.CutPrefix(path, module)
				if !ok || !(rel == "" || strings.HasPrefix(rel, "/")) {
					errs = append(errs, fmt.Errorf("go %s %s: not a package of %s", v[1], p, module))
					continue
				}
				if files, _ := filepath.Glob(filepath.Join(root, rel, "*.go")); len(files) == 0 && !(rel == "" && v[1] == "get") {
					errs = append(errs, fmt.Errorf("go %s %s: no Go files in %s", v[1], p, filepath.Join(root, rel)))
				}
			}
		case v[0] == "go" && len(v) > 3 && v[1] == "build" && v[2] == "-C":
			if files, _ := filepath.Glob(filepath.Join(root, dir, v[3], "*.go")); len(files) == 0 {
				errs = append(errs, fmt.Errorf("go build -C %s: no Go files there", v[3]))
			}
		case v[0] == "bash" && len(v) == 2 && v[1] == ".ci/run":
			if files, _ := filepath.Glob(filepath.Join(root, ".ci/run")); len(files) == 0 {
				errs = append(errs, fmt.Errorf("bash .ci/run: no .ci/run"))
			}
		case v[0] == "hyperfine":
			for _, a := range v[1:] {
				if !strings.Contains(a, " ") {
					continue
				}
				inner, err := ParseShell(a)
				if err != nil {
					errs = append(errs, fmt.Errorf("hyperfine %q: %v", a, err))
					continue
				}
				for _, il := range inner {
					errs = append(errs, s.checkLine(il, root, module)...)
				}
			}
		}
	}
	return errs
}

// leftOut reports whether Script leaves a pipeline out: it holds a `go
// test` that runs tests, a `go install` or `go get`, or `bash .ci/run`.
func leftOut(p []Command) bool {
	for _, c := range p {
		w, _, _ := Inner(c)
		v := Vals(w)
		switch {
		case len(v) >= 2 && v[0] == "go" && v[1] == "test":
			if g, err := ParseGoTest(v[2:], ""); err != nil || g.Runs() {
				return true
			}
		case len(v) >= 2 && v[0] == "go" && (v[1] == "install" || v[1] == "get"):
			return true
		case len(v) == 2 && v[0] == "bash" && v[1] == ".ci/run":
			return true
		}
	}
	return false
}

// Programs returns the programs that Script's version of a block runs,
// other than wirespeed, go, bash, shell builtins and programs every system
// has: what must be installed for the block to run.
func Programs(b Block) ([]string, error) {
	lines, err := ParseShell(b.Text)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var progs []string
	for _, l := range lines {
		for _, p := range l.Pipelines {
			if leftOut(p.Commands) {
				continue
			}
			for _, c := range p.Commands {
				w, _, start := Inner(c)
				if len(w) == 0 {
					continue
				}
				names := []string{w[0].Val}
				// The wrappers that run it are programs too.
				for _, x := range c.Words[:start] {
					if x.Val == "taskset" || x.Val == "flock" || x.Val == "nice" || x.Val == "sudo" || x.Val == "ip" {
						names = append(names, x.Val)
					}
				}
				for _, name := range names {
					if isWirespeed(name) || name == "go" || name == "bash" || builtin(name) || strings.HasPrefix(name, "./") || seen[name] {
						continue
					}
					seen[name] = true
					progs = append(progs, name)
				}
			}
		}
	}
	slices.Sort(progs)
	return progs, nil
}

// Script returns a block as a bash script that runs it in quick mode:
//   - every address HOST:PORT (IPv4, port not 0) becomes 127.0.0.1 with a
//     port port() returns, the same one wherever the block repeats it,
//     unless the block is a netns one (its network is its own);
//   - "go run ./cmd/wirespeed" becomes "wirespeed" (the binary the caller
//     puts first in PATH), and each wirespeed command's run is shortened
//     (Specs.Quick);
//   - `go test` commands that run tests (not -c), `go install`, `go get`
//     and `bash .ci/run` are left out (the pipelines they are in become
//     ":"): CheckBlock checks them instead;
//   - after a line that starts a server in the background ("&"), the
//     script waits until each address on the line accepts connections;
//   - at the end, and on any failure, the background jobs get SIGTERM;
//     each must then exit with status 0 or by the signal.
func (s *Specs) Script(b Block, port func() (int, error)) (string, error) {
	ports := map[string]string{}
	var perr error
	text := addrRE.ReplaceAllStringFunc(b.Text, func(a string) string {
		m := addrRE.FindStringSubmatch(a)
		if m[2] == "0" || b.Netns {
			// A netns block has a network of its own: its addresses
			// are free as written.
			return a
		}
		if p, ok := ports[a]; ok {
			return p
		}
		n, err := port()
		if err != nil {
			perr = err
			return a
		}
		ports[a] = "127.0.0.1:" + strconv.Itoa(n)
		return ports[a]
	})
	if perr != nil {
		return "", perr
	}
	lines, err := ParseShell(text)
	if err != nil {
		return "", fmt.Errorf("%s: %v", b.Where(), err)
	}
	var edits []edit
	for k, l := range lines {
		e, err := s.quickLine(l)
		if err != nil {
			return "", fmt.Errorf("%s+%d: %v", b.Where(), l.Num, err)
		}
		edits = append(edits, e...)
		if !l.Background {
			continue
		}
		if k+1 < len(lines) && lines[k+1].Start < l.End {
			return "", fmt.Errorf("%s+%d: a command after a background one on its line; give the background one a line of its own", b.Where(), l.Num)
		}
		var sb strings.Builder
		sb.WriteString("\nstarted $!")
		for _, a := range addrRE.FindAllString(l.Text, -1) {
			host, p, _ := strings.Cut(a, ":")
			fmt.Fprintf(&sb, "\nlistening $! %s %s", host, p)
		}
		cmdText, _, _ := strings.Cut(l.Text, " #") // not the comment's words
		for _, m := range unixRE.FindAllStringSubmatch(cmdText, -1) {
			fmt.Fprintf(&sb, "\nlistening_unix $! %s", m[1])
		}
		edits = append(edits, edit{l.End, l.End, sb.String()})
	}
	out := applyEdits(text, edits)
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return scriptPrelude + out + "stop_all\n", nil
}

// An edit replaces text[start:end].
type edit struct {
	start, end int
	text       string
}

// applyEdits applies edits to text; an edit within one before it (a
// command in the $(...) of a pipeline left out) is dropped.
func applyEdits(text string, edits []edit) string {
	slices.SortStableFunc(edits, func(a, b edit) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.start < at {
			continue
		}
		b.WriteString(text[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// scriptPrelude defines the script's helpers: started records a
// background job; listening waits up to 120 s for an address to accept a
// connection, failing as soon as the job meant to listen there has ended
// (listening_unix, for a Unix socket's file to be there: bash cannot
// connect to one, and the servers listen as soon as they have bound it);
// stop_all stops the jobs and checks how they ended.
const scriptPrelude = `set -euo pipefail
jobs_started=()
started() { jobs_started+=("$1"); }
listening() {
	for _ in $(seq 2400); do
		if (exec 3<>"/dev/tcp/$2/$3") 2>/dev/null; then return 0; fi
		if ! kill -0 "$1" 2>/dev/null; then
			echo "doccheck: the job meant to listen on $2:$3 has ended" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "doccheck: nothing listens on $2:$3" >&2
	return 1
}
listening_unix() {
	for _ in $(seq 2400); do
		if [ -S "$2" ]; then return 0; fi
		if ! kill -0 "$1" 2>/dev/null; then
			echo "doccheck: the job meant to listen on unix:$2 has ended" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "doccheck: nothing listens on unix:$2" >&2
	return 1
}
stop_all() {
	trap - EXIT
	local p st=0 rc
	for p in "${jobs_started[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${jobs_started[@]}"; do
		rc=0; wait "$p" || rc=$?
		if [ "$rc" != 0 ] && [ "$rc" != 143 ]; then echo "doccheck: background job $p exited with status $rc" >&2; st=1; fi
	done
	jobs_started=()
	return $st
}
trap 'for p in "${jobs_started[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait' EXIT
`

// quickLine returns the edits of one line for Script: pipelines left
// out, wirespeed commands shortened.
func (s *Specs) quickLine(l Line) ([]edit, error) {
	var edits []edit
	for _, p := range l.Pipelines {
		if leftOut(p.Commands) {
			edits = append(edits, edit{p.Start, p.End, ":"})
			continue
		}
		for _, c := range p.Commands {
			w, _, start := Inner(c)
			if len(w) == 0 || !isWirespeed(w[0].Val) {
				continue
			}
			q, orig, err := s.Quick(Vals(w))
			if err != nil {
				return nil, err
			}
			words := make([]string, len(q))
			for k, a := range q {
				if orig[k] >= 0 {
					words[k] = w[orig[k]].Raw // as written, expansions included
				} else {
					words[k] = Quote(a)
				}
			}
			words[0] = "wirespeed"
			edits = append(edits, edit{c.Words[start].Start, w[len(w)-1].End, strings.Join(words, " ")})
		}
	}
	return edits, nil
}
