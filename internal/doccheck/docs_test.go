package doccheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

const module = "github.com/wirespeed/wirespeed"

// The bars of the README as a front door.
const (
	maxReadmeLines = 250
	setupWithin    = 40
	maxDocHeader   = 50
)

// root is the repository's top directory, from this package's.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A doc is one Markdown file and its blocks.
type doc struct {
	path, name, text string
	blocks           []Block
}

// docs reads README.md and docs/*.md.
func docs(t *testing.T) []doc {
	t.Helper()
	r := root(t)
	paths, err := filepath.Glob(filepath.Join(r, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(r, "README.md")}, paths...)
	var ds []doc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(r, p)
		blocks, err := Blocks(name, string(b))
		if err != nil {
			t.Error(err)
		}
		ds = append(ds, doc{path: p, name: name, text: string(b), blocks: blocks})
	}
	return ds
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// wirespeedBin builds the wirespeed command once per test process and
// returns the directory that holds it.
func wirespeedBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "doccheck-bin")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "wirespeed"), module+"/cmd/wirespeed").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func specs(t *testing.T) *Specs {
	t.Helper()
	s, err := LoadSpecs(filepath.Join(wirespeedBin(t), "wirespeed"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The README is a front door: short, with the two set-up commands (the
// main job and the tests CI runs) in a shell block near its top.
func TestReadmeFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d", n, maxReadmeLines)
	}
	blocks, err := Blocks("README.md", text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"go run ./cmd/wirespeed bench": false, "bash .ci/run": false}
	for _, bl := range blocks {
		if bl.Lang != "sh" || bl.Line > setupWithin {
			continue
		}
		lines, err := ParseShell(bl.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if bl.Line+l.Num > setupWithin {
				continue
			}
			for _, c := range l.Commands() {
				cmd := strings.Join(Vals(c.Words), " ")
				if _, ok := want[cmd]; ok {
					want[cmd] = true
				}
			}
		}
	}
	for cmd, found := range want {
		if !found {
			t.Errorf("README.md: %q is not a command in a ```sh block within its first %d lines", cmd, setupWithin)
		}
	}
}

// Every fenced block says what it holds, so that no command escapes the
// checks, and every relative link leads to a file (and heading) there.
func TestDocsBlocksAndLinks(t *testing.T) {
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			switch b.Lang {
			case "sh", "go", "text":
			default:
				t.Errorf("%s: block of %q: give it sh (commands), go or text", b.Where(), b.Lang)
			}
		}
		targets, lines := Links(d.text)
		for i, target := range targets {
			path, anchor, _ := strings.Cut(target, "#")
			file := d.path
			if path != "" {
				file = filepath.Join(filepath.Dir(d.path), path)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Errorf("%s:%d: link to %s: %v", d.name, lines[i], target, err)
				continue
			}
			if anchor == "" || st.IsDir() {
				continue
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !Anchors(string(b))[anchor] {
				t.Errorf("%s:%d: link to %s: no heading with anchor #%s", d.name, lines[i], target, anchor)
			}
		}
	}
}

// Every command of every shell block is checked against the code: the
// wirespeed command's flags, the go test targets, the module's packages.
func TestDocsCommandsParse(t *testing.T) {
	s := specs(t)
	r := root(t)
	n := 0
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			if b.Lang != "sh" {
				continue
			}
			n++
			for _, err := range s.CheckBlock(b, r, module) {
				t.Error(err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no shell blocks in README.md and docs/")
	}
}

// Every shell block not marked parse-only runs, in quick mode, and
// succeeds.
func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the docs' commands")
	}
	s := specs(t)
	bin := wirespeedBin(t)
	r := root(t)
	for _, d := range docs(t) {
		// The blocks of a file run in one directory, in order: a block
		// may read what one before it wrote, as a reader's would.
		work := workDir(t, r)
		var printed strings.Builder // what the file's blocks printed so far
		incomplete := false         // one of them did not run to its end
		var columns []Block         // checked against all they printed
		for _, b := range d.blocks {
			if b.Columns {
				columns = append(columns, b)
				continue
			}
			if b.Lang != "sh" || b.ParseOnly {
				continue
			}
			ran := false
			// Named FILE:LINE without docs/, which -run would take for a level.
			t.Run(fmt.Sprintf("%s:%d", filepath.Base(b.File), b.Line), func(t *testing.T) {
				progs, err := Programs(b)
				if err != nil {
					t.Fatal(err)
				}
				if b.Netns {
					progs = append(progs, "unshare", "mount")
					if os.Geteuid() != 0 {
						tooltest.Unavailable(t, "%s: makes network namespaces, as root", b.Where())
					}
				}
				for _, p := range progs {
					tooltest.Path(t, p)
				}
				script, err := s.Script(b, tooltest.FreePort)
				if err != nil {
					t.Fatal(err)
				}
				printed.WriteString(runScript(t, b, script, bin, work))
				ran = true
			})
			if !ran {
				incomplete = true
			}
		}
		for _, b := range columns {
			t.Run(fmt.Sprintf("%s:%d", filepath.Base(b.File), b.Line), func(t *testing.T) {
				if incomplete {
					t.Skip("a shell block of the file did not run")
				}
				checkColumns(t, b, printed.String())
			})
		}
	}
}

// workDir returns a new directory that links to the repository's files
// (so that paths in the repository resolve as in a checkout, and what the
// commands write stays out of it).
func workDir(t *testing.T, repo string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// runScript runs block b's script with bash in the directory work (see
// workDir), with bin first in PATH and b.Env in the environment, and ends
// the test if it fails. A netns block runs under unshare, in a network
// namespace with only a loopback device and a mount namespace with a
// /run/netns of its own: the namespaces it names are its own, and end
// with it.
func runScript(t *testing.T, b Block, script, bin, work string) string {
	t.Helper()
	start := time.Now()
	out, err := execScript(t, b, script, bin, work)
	if err != nil {
		if len(out) > 8000 {
			out = "...\n" + out[len(out)-8000:]
		}
		t.Fatalf("%v after %v\nscript:\n%s\noutput:\n%s", err, time.Since(start).Round(time.Millisecond), script, out)
	}
	t.Logf("ran in %v:\n%s", time.Since(start).Round(time.Millisecond), script)
	return out
}

// checkColumns checks that the header lines of a columns block are among
// those of printed, the output of its file's shell blocks.
func checkColumns(t *testing.T, b Block, printed string) {
	t.Helper()
	want := HeaderRows(b.Text)
	if len(want) == 0 {
		t.Fatalf("%s: a columns block with no header lines", b.Where())
	}
	have := map[string]bool{}
	for _, h := range HeaderRows(printed) {
		have[h] = true
	}
	for _, h := range want {
		if !have[h] {
			t.Errorf("%s: the commands above no longer print the header %q", b.Where(), h)
		}
	}
}

// netnsWrap is the shell command that runs a netns block's script ($0) in
// its namespaces.
const netnsWrap = `mkdir -p /run/netns && mount -t tmpfs doccheck-netns /run/netns && ip link set lo up && exec bash "$0"`

// execScript runs script as runScript does and returns its output.
func execScript(t *testing.T, b Block, script, bin, work string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "block.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"bash", path}
	if b.Netns {
		args = []string{"unshare", "--net", "--mount", "--propagation", "private", "--", "bash", "-c", netnsWrap, path}
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, b.Env...)
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	// Whatever the script left behind (it stops its own jobs) ends with it.
	killGroup(cmd)
	return out.String(), err
}

// go doc prints at most maxDocHeader lines before the first symbol of
// each package of the module.
func TestGoDocHeaders(t *testing.T) {
	r := root(t)
	list := exec.Command("go", "list", "./...")
	list.Dir = r
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		t.Fatal("go list ./... lists no packages")
	}
	type result struct {
		pkg string
		n   int
		err error
	}
	results := make([]result, len(pkgs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command("go", "doc", p)
			cmd.Dir = r
			out, err := cmd.Output()
			results[i] = result{p, HeaderLines(string(out)), err}
		}()
	}
	wg.Wait()
	for _, res := range results {
		switch {
		case res.err != nil:
			t.Errorf("go doc %s: %v", res.pkg, res.err)
		case res.n > maxDocHeader:
			t.Errorf("go doc %s: %d lines before the first symbol, more than %d", res.pkg, res.n, maxDocHeader)
		default:
			t.Logf("go doc %s: %d lines", res.pkg, res.n)
		}
	}
}

// The library's own graph stays small: what textproto and dot import,
// on every platform and with -tags purego, is the standard library, this
// module and golang.org/x/sys and x/text. The parsers doccheck uses
// (goldmark, mvdan.cc/sh) are for its tests only.
func TestLibraryDeps(t *testing.T) {
	r := root(t)
	for _, env := range [][]string{nil, {"GOARCH=arm64"}, {"GOOS=darwin"}, {"GOOS=windows"}, {"GOFLAGS=-tags=purego"}} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./textproto", "./dot")
		cmd.Dir = r
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v go list -deps: %v", env, err)
		}
		for _, p := range strings.Fields(string(out)) {
			switch {
			case p == module || strings.HasPrefix(p, module+"/"):
			case strings.HasPrefix(p, "golang.org/x/sys/"), strings.HasPrefix(p, "golang.org/x/text/"):
			default:
				t.Errorf("%v: textproto and dot import %s: only the standard library, golang.org/x/sys and golang.org/x/text may be in their graph", env, p)
			}
		}
	}
}
