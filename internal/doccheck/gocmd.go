package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// goTestFlag reports whether name is a flag of `go test` (or of the
// build flags it takes) that the docs may use, and whether it takes a
// value.
func goTestFlag(name string) (takesValue, ok bool) {
	switch name {
	case "run", "bench", "benchtime", "count", "fuzz", "fuzztime", "tags", "timeout", "cpu", "o", "C", "list", "skip":
		return true, true
	case "race", "short", "v", "c", "benchmem", "json", "failfast":
		return false, true
	}
	return false, false
}

// A GoTest is a `go test` command line, parsed.
type GoTest struct {
	Flags map[string]string
	Pkgs  []string
	Dir   string // the directory it runs in (-C, or a cd before it), relative to the repository
}

// Runs reports whether the command runs tests (not only builds them: -c).
func (g GoTest) Runs() bool { _, c := g.Flags["c"]; return !c }

// ParseGoTest parses the arguments after "go test"; dir is the directory
// the command runs in, relative to the repository.
func ParseGoTest(args []string, dir string) (GoTest, error) {
	g := GoTest{Flags: map[string]string{}, Dir: dir}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			g.Pkgs = append(g.Pkgs, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		takes, ok := goTestFlag(name)
		if !ok {
			return g, fmt.Errorf("go test: flag -%s is none the docs are checked for", name)
		}
		if takes && !hasValue {
			if i+1 >= len(args) {
				return g, fmt.Errorf("go test: -%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if name == "C" {
			g.Dir = filepath.Join(g.Dir, value)
		}
		g.Flags[name] = value
	}
	if len(g.Pkgs) == 0 {
		g.Pkgs = []string{"."}
	}
	return g, nil
}

// Check checks the command against the repository at root: its packages'
// directories exist, its -run, -bench and -fuzz patterns compile, -bench
// names at least one benchmark of each package, and -fuzz exactly one
// fuzz target.
func (g GoTest) Check(root string) error {
	for _, f := range []string{"run", "bench", "fuzz", "skip"} {
		if p, ok := g.Flags[f]; ok {
			if _, err := regexp.Compile(p); err != nil {
				return fmt.Errorf("go test -%s %q: %v", f, p, err)
			}
		}
	}
	for _, pkg := range g.Pkgs {
		dir := filepath.Join(root, g.Dir, strings.TrimSuffix(pkg, "/..."))
		if !strings.HasPrefix(pkg, ".") {
			return fmt.Errorf("go test %s: give packages as ./DIR", pkg)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("go test %s: no directory %s", pkg, dir)
		}
		if strings.HasSuffix(pkg, "...") {
			if _, ok := g.Flags["fuzz"]; ok {
				return fmt.Errorf("go test -fuzz %s: fuzzing takes one package", pkg)
			}
			continue
		}
		funcs, err := testFuncs(dir)
		if err != nil {
			return err
		}
		if p, ok := g.Flags["bench"]; ok && len(match(funcs, "Benchmark", p)) == 0 {
			return fmt.Errorf("go test -bench %q %s: no benchmark matches", p, pkg)
		}
		if p, ok := g.Flags["fuzz"]; ok {
			if m := match(funcs, "Fuzz", p); len(m) != 1 {
				return fmt.Errorf("go test -fuzz %q %s: %d fuzz targets match (%v), want 1", p, pkg, len(m), m)
			}
		}
	}
	return nil
}

// testFuncs returns the names of the top-level functions of the _test.go
// files in dir.
func testFuncs(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				names = append(names, fd.Name.Name)
			}
		}
	}
	return names, nil
}

// match returns the functions named prefix+X that the go command's
// pattern selects: its first level (before an unbracketed "/") is matched
// against the whole name.
func match(funcs []string, prefix, pattern string) []string {
	first := pattern
	if k := strings.IndexByte(pattern, '/'); k >= 0 {
		first = pattern[:k]
	}
	re, err := regexp.Compile(first)
	if err != nil {
		return nil
	}
	var m []string
	for _, f := range funcs {
		if strings.HasPrefix(f, prefix) && len(f) > len(prefix) && re.MatchString(f) {
			m = append(m, f)
		}
	}
	return m
}
