package doccheck

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

func TestBlocks(t *testing.T) {
	md := "# T\n\ntext\n\n```sh\necho a\n```\n\n<!-- doccheck: parse-only (needs a real host) -->\n```sh\nssh host\n```\n\n```text\nout\n```\n"
	bs, err := Blocks("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{File: "x.md", Line: 5, Lang: "sh", Text: "echo a\n"},
		{File: "x.md", Line: 10, Lang: "sh", Text: "ssh host\n", ParseOnly: true, Reason: "needs a real host"},
		{File: "x.md", Line: 14, Lang: "text", Text: "out\n"},
	}
	if !reflect.DeepEqual(bs, want) {
		t.Errorf("got %+v\nwant %+v", bs, want)
	}
	for name, bad := range map[string]string{
		"indented":      "text\n\n    wirespeed bench\n",
		"tab":           "text\n\n\twirespeed bench\n",
		"unclosed":      "```sh\nwirespeed bench\n",
		"stray comment": "<!-- doccheck: parse-only (x) -->\ntext\n```sh\nx\n```\n",
		"bad comment":   "<!-- doccheck: skip -->\n```sh\nx\n```\n",
		"bad env":       "<!-- doccheck: env (size=1) -->\n```sh\nx\n```\n",
		"env, no run":   "<!-- doccheck: env (A=1) -->\n<!-- doccheck: parse-only (x) -->\n```sh\nx\n```\n",
		"last comment":  "text\n<!-- doccheck: parse-only (x) -->\n",
	} {
		if _, err := Blocks("x.md", bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	bs, err = Blocks("x.md", "<!-- doccheck: env (A=1 B_2=x) -->\n<!-- doccheck: netns (as root) -->\n```sh\nip netns add a\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	want = []Block{{File: "x.md", Line: 3, Lang: "sh", Text: "ip netns add a\n", Env: []string{"A=1", "B_2=x"}, Netns: true, Reason: "as root"}}
	if !reflect.DeepEqual(bs, want) {
		t.Errorf("got %+v\nwant %+v", bs, want)
	}
	// A list item's continuation is not a code block.
	if _, err := Blocks("x.md", "- item\n  more\n"); err != nil {
		t.Error(err)
	}
}

// Fenced blocks are found wherever they stand, with their marks; a
// fence left open fails wherever it stands.
func TestBlocksContainers(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []Block
	}{
		{"list item", "1. Run:\n\n   ```sh\n   wirespeed frob\n   ```\n2. Then\n",
			[]Block{{File: "x.md", Line: 3, Lang: "sh", Text: "wirespeed frob\n"}}},
		{"tight list item", "- Run:\n  ```sh\n  echo a\n\n  echo b\n  ```\n- next\n",
			[]Block{{File: "x.md", Line: 2, Lang: "sh", Text: "echo a\n\necho b\n"}}},
		{"nested list", "- a\n  - b\n\n    ~~~sh\n    echo b\n    ~~~\n",
			[]Block{{File: "x.md", Line: 4, Lang: "sh", Text: "echo b\n"}}},
		{"block quote", "> Note:\n>\n> ```sh\n> echo q\n> ```\n",
			[]Block{{File: "x.md", Line: 3, Lang: "sh", Text: "echo q\n"}}},
		{"marked in a list item", "- Run:\n\n  <!-- doccheck: parse-only (a real host) -->\n  ```sh\n  ssh host\n  ```\n",
			[]Block{{File: "x.md", Line: 4, Lang: "sh", Text: "ssh host\n", ParseOnly: true, Reason: "a real host"}}},
		{"longer fence", "````sh\n```\necho x\n````\n",
			[]Block{{File: "x.md", Line: 1, Lang: "sh", Text: "```\necho x\n"}}},
		{"no newline at the end", "```sh\necho x\n```", []Block{{File: "x.md", Line: 1, Lang: "sh", Text: "echo x\n"}}},
	} {
		got, err := Blocks("x.md", tc.md)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	for name, bad := range map[string]string{
		"unclosed in a list item":    "- Run:\n\n  ```sh\n  wirespeed frob\n\nafter the list\n",
		"unclosed in a block quote":  "> ```sh\n> echo\n\nafter\n",
		"shorter closing fence":      "````sh\necho\n```\n",
		"indented in a list item":    "- Run:\n\n        wirespeed frob\n",
		"comment in a paragraph":     "Run <!-- doccheck: parse-only (x) --> this:\n\n```sh\nx\n```\n",
		"comment ends a list item":   "- a\n\n  <!-- doccheck: parse-only (x) -->\n\n```sh\nx\n```\n",
		"comment before a paragraph": "<!-- doccheck: parse-only (x) -->\n\ntext\n",
	} {
		if bs, err := Blocks("x.md", bad); err == nil {
			t.Errorf("%s: no error (%+v)", name, bs)
		}
	}
}

// Links of every form are found: inline, with a title, reference-style
// (full, collapsed, shortcut), images; URLs with a scheme are left out.
func TestLinkForms(t *testing.T) {
	md := "Inline [a](docs/a.md) and titled [b](docs/b.md \"B\") and [c](<docs/c d.md> 'C').\n" +
		"Full [d][ref-d], collapsed [e][], shortcut [f], image ![g](img/g.png).\n" +
		"- In a list, [h](h.md#x).\n" +
		"\n| table | [i](i.md) |\n| --- | --- |\n\n" +
		"Skipped: [u](https://x.org/a.md), <https://x.org>, [m](mailto:a@b), `[code](no.md)`.\n\n" +
		"```text\n[in a block](no.md)\n```\n\n" +
		"[ref-d]: docs/d.md\n[e]: docs/e.md \"E\"\n[f]: docs/f.md\n[unused]: docs/unused.md\n"
	targets, lines := Links(md)
	want := []string{"docs/a.md", "docs/b.md", "docs/c d.md", "docs/d.md", "docs/e.md", "docs/f.md", "img/g.png", "h.md#x", "i.md"}
	if !reflect.DeepEqual(targets, want) {
		t.Errorf("Links:\n%q\nwant\n%q", targets, want)
	}
	if wantLines := []int{1, 1, 1, 2, 2, 2, 2, 3, 5}; !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("lines %v, want %v", lines, wantLines)
	}
	a := Anchors("Set up\n======\n\n## *Emphasis* and [link](x.md)\n\n- ## In a list\n")
	for _, k := range []string{"set-up", "emphasis-and-link", "in-a-list"} {
		if !a[k] {
			t.Errorf("no anchor %q in %v", k, a)
		}
	}
}

func TestLinksAnchors(t *testing.T) {
	md := "See [a](docs/a.md#the-x-flag), [b](https://x.org/y) and [c](#set-up).\n\n## Set up\n\n## The `-x` flag\n\n```sh\n# not a heading\n```\n\n## Set up\n"
	targets, lines := Links(md)
	if !reflect.DeepEqual(targets, []string{"docs/a.md#the-x-flag", "#set-up"}) || !reflect.DeepEqual(lines, []int{1, 1}) {
		t.Errorf("Links: %q %v", targets, lines)
	}
	a := Anchors(md)
	for _, k := range []string{"set-up", "the--x-flag", "set-up-1"} {
		if !a[k] {
			t.Errorf("no anchor %q in %v", k, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}

func TestParseShell(t *testing.T) {
	text := "A=1 taskset -c 0 wirespeed serve -addr 127.0.0.1:9000 &   # a server\n" +
		"go test -run '^$' -bench 'A|B' ./x | benchstat -col /impl - 2>/dev/null\n" +
		"wirespeed tcpperf \\\n\t-hdr-log $(hostname).hlog > out.txt 2>&1 && echo \"done now\"\n" +
		"(cd interop && go test ./...)\n" +
		"cmp <(md5sum a) <(wirespeed sum a)\n"
	lines, err := ParseShell(text)
	if err != nil {
		t.Fatal(err)
	}
	var got [][][]string
	for _, l := range lines {
		for _, p := range l.Pipelines {
			var cmds [][]string
			for _, c := range p.Commands {
				cmds = append(cmds, Vals(c.Words))
			}
			got = append(got, cmds)
		}
	}
	want := [][][]string{
		{{"A=1", "taskset", "-c", "0", "wirespeed", "serve", "-addr", "127.0.0.1:9000"}},
		{{"go", "test", "-run", "^$", "-bench", "A|B", "./x"}, {"benchstat", "-col", "/impl", "-"}},
		{{"wirespeed", "tcpperf", "-hdr-log", "$(hostname).hlog"}},
		{{"hostname"}},
		{{"echo", "done now"}},
		{{"cd", "interop"}},
		{{"go", "test", "./..."}},
		{{"cmp", "<(md5sum a)", "<(wirespeed sum a)"}},
		{{"md5sum", "a"}},
		{{"wirespeed", "sum", "a"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pipelines:\n%q\nwant\n%q", got, want)
	}
	if !lines[0].Background || lines[1].Background {
		t.Error("Background")
	}
	if len(lines) != 5 || lines[2].Num != 3 || lines[3].Num != 5 {
		t.Errorf("lines: %d, third at %d", len(lines), lines[2].Num)
	}
	if l := lines[0]; l.Text != "A=1 taskset -c 0 wirespeed serve -addr 127.0.0.1:9000 &   # a server" || text[l.Start:l.End] != l.Text {
		t.Errorf("first line's text %q at %d:%d", l.Text, l.Start, l.End)
	}
	if p := lines[1].Pipelines[0]; text[p.Start:p.End] != "go test -run '^$' -bench 'A|B' ./x | benchstat -col /impl - 2>/dev/null" {
		t.Errorf("pipeline's text %q", text[p.Start:p.End])
	}
	w, env, start := Inner(lines[0].Pipelines[0].Commands[0])
	if Vals(w)[0] != "wirespeed" || !reflect.DeepEqual(env, []string{"A=1"}) || start != 4 {
		t.Errorf("Inner: %q %q %d", Vals(w), env, start)
	}
	c := Command{Words: []Word{{Val: "ip"}, {Val: "netns"}, {Val: "exec"}, {Val: "ns1"}, {Val: "go"}, {Val: "run"}, {Val: "./cmd/wirespeed"}, {Val: "bench"}}}
	if w, _, start := Inner(c); !reflect.DeepEqual(Vals(w), []string{"wirespeed", "bench"}) || start != 4 {
		t.Errorf("Inner: %q %d", Vals(w), start)
	}
	for _, bad := range []string{"echo 'a", `echo "a`, "echo $(a", "for i in 1 2; do echo $i\n", "cat <<EOF\nbody\n"} {
		if _, err := ParseShell(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// What bash reads as one word, one command or no command, ParseShell
// does too: each case lists the commands of a block, by their words'
// values.
func TestParseShellCases(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       [][]string
	}{
		{"heredoc body is text", "cat <<EOF > notes.txt\nEOF is not a command\nwirespeed frob -bogus\nEOF\necho after\n",
			[][]string{{"cat"}, {"echo", "after"}}},
		{"quoted heredoc delimiter", "cat <<'END'\n$(not run)\nEND\n", [][]string{{"cat"}}},
		{"tab-stripped heredoc", "cat <<-EOF\n\tbody\n\tEOF\n", [][]string{{"cat"}}},
		{"heredoc expansions run", "cat <<EOF\n$(wirespeed sum go.mod)\nEOF\n", [][]string{{"cat"}, {"wirespeed", "sum", "go.mod"}}},
		{"default with spaces", "head -c ${SIZE:-2 M} /dev/urandom\n", [][]string{{"head", "-c", "${SIZE:-2 M}", "/dev/urandom"}}},
		{"quoted default", "head -c \"${SIZE:-2M}\" x\n", [][]string{{"head", "-c", "${SIZE:-2M}", "x"}}},
		{"paren in a quote in $()", `echo $(echo "a)b") c` + "\n", [][]string{{"echo", `$(echo "a)b")`, "c"}, {"echo", "a)b"}}},
		{"multi-line single quote", "printf 'a\nb' > f\n", [][]string{{"printf", "a\nb"}}},
		{"multi-line double quote", "echo \"a\nb\" c\n", [][]string{{"echo", "a\nb", "c"}}},
		{"escapes", `echo a\ b "c\"d" 'e\f' "g\h"` + "\n", [][]string{{"echo", "a b", `c"d`, `e\f`, `g\h`}}},
		{"continuation", "wirespeed tcpperf \\\n  -conns 10\n", [][]string{{"wirespeed", "tcpperf", "-conns", "10"}}},
		{"for loop", "for i in $(seq 2); do\n\techo $i\ndone\n", [][]string{{"seq", "2"}, {"echo", "$i"}}},
		{"if", "if [ -e x ]; then rm x; else touch x; fi\n", [][]string{{"[", "-e", "x", "]"}, {"rm", "x"}, {"touch", "x"}}},
		{"export", "export SSL_CERT_FILE=$PWD/cert.pem B\n", [][]string{{"export", "SSL_CERT_FILE=$PWD/cert.pem", "B"}}},
		{"assignment only", "n=${MESSAGES:-60000}\nhz=$(getconf CLK_TCK)\n", [][]string{{"n=${MESSAGES:-60000}"}, {"hz=$(getconf CLK_TCK)"}, {"getconf", "CLK_TCK"}}},
		{"comment", "# wirespeed frob\necho a # b\n", [][]string{{"echo", "a"}}},
		{"time", "time wirespeed bench\n", [][]string{{"wirespeed", "bench"}}},
	} {
		lines, err := ParseShell(tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got [][]string
		for _, l := range lines {
			for _, c := range l.Commands() {
				got = append(got, Vals(c.Words))
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

const usage = `usage: x [flags]
  -8	one letter
  -addr string
    	address (default "127.0.0.1:2525")
  -auth-file FILE
    	credentials
  -duration duration
    	time
  -m int
    	messages
  -q	quiet
  -W value
    	repeatable
`

func TestParseGoUsage(t *testing.T) {
	fs, err := ParseGoUsage("x", usage)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Flag{"8": {"8", ""}, "addr": {"addr", "string"}, "auth-file": {"auth-file", "FILE"},
		"duration": {"duration", "duration"}, "m": {"m", "int"}, "q": {"q", ""}, "W": {"W", "value"}}
	if !reflect.DeepEqual(fs.Flags, want) {
		t.Errorf("flags %v\nwant %v", fs.Flags, want)
	}
	flags, pos, err := fs.Parse([]string{"-8", "--addr=h:1", "-duration", "5s", "-q=false", "-m", "$N", "host", "-x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 5 || !reflect.DeepEqual(pos, []string{"host", "-x"}) {
		t.Errorf("flags %+v, positional %q", flags, pos)
	}
	if f := flags[2]; f.Name != "duration" || f.Value != "5s" || f.First != 2 || f.Last != 3 {
		t.Errorf("duration: %+v", f)
	}
	for _, bad := range [][]string{{"-tls"}, {"-addr"}, {"-duration", "5"}, {"-m", "x"}, {"-q=maybe"}, {"-h"}, {"-help"}} {
		if _, _, err := fs.Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ParseGoUsage("x", "usage: x\n"); err == nil {
		t.Error("no flags: no error")
	}
}

func TestParseGNU(t *testing.T) {
	help := "  -a, --algorithm=NAME  md5\n  -c, --check   check\n      --tag     BSD\n  -z, --zero    NUL\n      --help    help\n"
	fs, err := ParseGNUHelp("sum", help)
	if err != nil {
		t.Fatal(err)
	}
	flags, pos, err := fs.Parse([]string{"-a", "sha256", "--tag", "f1", "-cz", "--algorithm=md5", "f2", "--", "-c"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Name+"="+f.Value)
	}
	if !reflect.DeepEqual(names, []string{"algorithm=sha256", "tag=", "check=", "zero=", "algorithm=md5"}) || !reflect.DeepEqual(pos, []string{"f1", "f2", "-c"}) {
		t.Errorf("flags %q, positional %q", names, pos)
	}
	// Abbreviations, as `wirespeed sum` takes them.
	flags, pos, err = fs.Parse([]string{"--alg", "sha1", "--ze", "--ch=x"})
	if err == nil || len(flags) != 0 || pos != nil {
		t.Errorf("--ch=x: %+v %q %v", flags, pos, err)
	}
	if flags, _, err = fs.Parse([]string{"--alg=sha1", "--ze", "f"}); err != nil || len(flags) != 2 || flags[0].Name != "algorithm" || flags[1].Name != "zero" {
		t.Errorf("abbreviations: %+v %v", flags, err)
	}
	for _, bad := range [][]string{{"--quiet"}, {"-q"}, {"-a"}, {"--tag=x"}, {"--algorithm"}} {
		if _, _, err := fs.Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestGoTest(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package p\nimport \"testing\"\nfunc BenchmarkSession(b *testing.B) {}\nfunc FuzzReader(f *testing.F) {}\nfunc FuzzReaderLimits(f *testing.F) {}\nfunc TestX(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(dir, "p", "p_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(args ...string) error {
		g, err := ParseGoTest(args, "")
		if err != nil {
			return err
		}
		return g.Check(dir)
	}
	for _, ok := range [][]string{
		{"-run", "^$", "-bench", "Session", "-count", "10", "./p"},
		{"-fuzz", "^FuzzReader$", "./p"},
		{"-fuzz=FuzzReaderLimits", "./p"},
		{"-race", "./..."},
		{"-C", "p", "-c", "-o", "x", "."},
	} {
		if err := check(ok...); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range [][]string{
		{"-bench", "Sesion", "./p"},        // no such benchmark
		{"-fuzz", "FuzzReader", "./p"},     // two targets match
		{"-fuzz", "FuzzWriter", "./p"},     // none
		{"-bench", ".", "./q"},             // no such package
		{"-run", "(", "./p"},               // bad pattern
		{"-frobnicate", "./p"},             // not a go test flag
		{"-bench", ".", "example.com/pkg"}, // not a path
		{"-fuzz", "FuzzReader", "./..."},
	} {
		if err := check(bad...); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if g, _ := ParseGoTest([]string{"-c", "."}, ""); g.Runs() {
		t.Error("go test -c runs tests")
	}
}

func TestHeaderLines(t *testing.T) {
	out := "package x // import \"x\"\n\nPackage x does.\n\nMore.\n\nconst A = 1\nfunc F()\n"
	if n := HeaderLines(out); n != 6 {
		t.Errorf("HeaderLines = %d, want 6", n)
	}
	if n := HeaderLines("package main\n\nCommand m.\n"); n != 3 {
		t.Errorf("no symbols: HeaderLines = %d, want 3", n)
	}
}

// The checks against the real command: flags that drift, commands and
// suites that do not exist, positional arguments, fail.
func TestSpecsCheck(t *testing.T) {
	s := specs(t)
	for _, ok := range []string{
		"wirespeed smtp-sink -addr 127.0.0.1:587 -tls -tls-required -auth -auth-file users -digest sha256",
		"wirespeed smtp-sink -c 127.0.0.1:2525 100", // Postfix's form
		"wirespeed smtp-source -tls -tls-ca ca.pem -auth u:p -auth-mech LOGIN 127.0.0.1:25",
		"wirespeed bench -long digest dot",
		"wirespeed bench net -plot x.svg",
		"wirespeed tcpperf merge -json a.hlog b.hlog",
		"wirespeed tcpperf -wait send -duration 5s",
		"wirespeed sum -c --quiet SUMS",
		"wirespeed sum --check --qui --stri SUMS", // abbreviations, as sum takes them
	} {
		if err := s.Check(strings.Fields(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"wirespeed smtp-sink -tls-certificate x",
		"wirespeed smtp-sink 127.0.0.1:2525 100 extra",
		"wirespeed smtp-sink -addr 127.0.0.1:2525 127.0.0.1:2526 5",
		"wirespeed smtp-sink 127.0.0.1:2525 many",
		"wirespeed smtp-source -s 10 -m 5",
		"wirespeed smtp-source -s 10 a b",
		"wirespeed bench nosuch",
		"wirespeed tcpperf merge",
		"wirespeed tcpperf -duration 5",
		"wirespeed serve -engine std extra",
		"wirespeed frob",
		"wirespeed sum --frob",
		"wirespeed sum -c --st SUMS", // --status or --strict
	} {
		if err := s.Check(strings.Fields(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestQuick(t *testing.T) {
	s := specs(t)
	for in, want := range map[string]string{
		"wirespeed bench -long": "wirespeed bench -benchtime=1ms",
		"wirespeed smtp-source -s 10 -m 5000 -l 4096 -d 127.0.0.1:25":           "wirespeed smtp-source -s=4 -m=20 -l 4096 -d 127.0.0.1:25",
		"wirespeed smtp-source -m 3 127.0.0.1:25":                               "wirespeed smtp-source -m=3 -s=4 127.0.0.1:25",
		"wirespeed tcpperf -conns 10000 -qps 60000 -duration 5s -warmup 2s -q":  "wirespeed tcpperf -conns=100 -qps=5000 -duration=300ms -warmup=100ms -q",
		"wirespeed bench smtp -count 3":                                         "wirespeed bench smtp -count=1 -quick=true",
		"wirespeed sum -a sha256 f --tag":                                       "wirespeed sum -a sha256 f --tag",
		"wirespeed smtp-sink -addr 127.0.0.1:2525 -digest md5":                  "wirespeed smtp-sink -addr 127.0.0.1:2525 -digest md5",
		"wirespeed bench net -points 10k=echo/10000/20000/0 -step-runs 3 -json": "wirespeed bench net -points=low=echo/10/1000/0 -step-runs=1 -json -duration=200ms -warmup=100ms -step= -overload=200ms -sockperf=false",
		"wirespeed bench net -overload 0":                                       "wirespeed bench net -overload=0 -duration=200ms -warmup=100ms -points=low=echo/10/1000/0 -step= -step-runs=1 -sockperf=false",
		"wirespeed bench net -overload 5s":                                      "wirespeed bench net -overload=200ms -duration=200ms -warmup=100ms -points=low=echo/10/1000/0 -step= -step-runs=1 -sockperf=false",
	} {
		out, orig, err := s.Quick(strings.Fields(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := strings.Join(out, " "); got != want {
			t.Errorf("Quick(%s)\n = %s\nwant %s", in, got, want)
		}
		for k, i := range orig {
			if i >= 0 && strings.Fields(in)[i] != out[k] {
				t.Errorf("%s: orig[%d] = %d, but %q != %q", in, k, i, strings.Fields(in)[i], out[k])
			}
		}
	}
}

func TestScript(t *testing.T) {
	s := specs(t)
	b := Block{File: "x.md", Line: 1, Lang: "sh", Text: "wirespeed serve -addr 198.18.0.1:9000 &   # on the server\n" +
		"taskset -c 1 wirespeed tcpperf -addr 198.18.0.1:9000 -duration 60s -hdr-log $(hostname).hlog\n" +
		"go test -run '^$' -bench . -count 6 ./dot | benchstat -col /impl -\n" +
		"go install github.com/wirespeed/wirespeed/cmd/wirespeed@latest\n" +
		"go run ./cmd/wirespeed bench\n"}
	next := 40000
	script, err := s.Script(b, func() (int, error) { next++; return next, nil })
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(script, scriptPrelude)
	want := "wirespeed serve -addr 127.0.0.1:40001 &   # on the server\n" +
		"started $!\n" +
		"listening $! 127.0.0.1 40001\n" +
		"taskset -c 1 wirespeed tcpperf -addr 127.0.0.1:40001 -duration=300ms -hdr-log $(hostname).hlog -warmup=100ms -conns=100 -qps=5000\n" +
		":\n" +
		":\n" +
		"wirespeed bench -benchtime=1ms\n" +
		"stop_all\n"
	if body != want {
		t.Errorf("script:\n%s\nwant:\n%s", body, want)
	}
	if _, err := s.Script(b, func() (int, error) { return 0, errors.New("no port") }); err == nil {
		t.Error("a port error: no error")
	}
	// A server on a Unix socket: its file is waited for.
	ub := Block{File: "x.md", Line: 1, Lang: "sh", Text: "wirespeed serve -addr unix:/tmp/x.sock &   # as unix:PATH\n"}
	if us, err := s.Script(ub, func() (int, error) { return 0, errors.New("no port needed") }); err != nil ||
		!strings.HasSuffix(us, "wirespeed serve -addr unix:/tmp/x.sock &   # as unix:PATH\nstarted $!\nlistening_unix $! /tmp/x.sock\nstop_all\n") {
		t.Errorf("unix socket script: %v\n%s", err, us)
	}
	// A netns block's network is its own: its addresses stay.
	nb := Block{File: "x.md", Line: 1, Lang: "sh", Netns: true, Text: "wirespeed smtp-sink -addr 127.0.0.1:587 &\n"}
	if ns, err := s.Script(nb, func() (int, error) { return 0, errors.New("no port needed") }); err != nil ||
		!strings.HasSuffix(ns, "wirespeed smtp-sink -addr 127.0.0.1:587 &\nstarted $!\nlistening $! 127.0.0.1 587\nstop_all\n") {
		t.Errorf("netns script: %v\n%s", err, ns)
	}
	// A here-document stays as written, and a server's lines come after
	// its body; a command after a server on its line has no place for
	// them.
	hb := Block{File: "x.md", Line: 1, Lang: "sh", Text: "cat <<EOF > users &\nalice:s3cret\nEOF\nwirespeed bench\n"}
	if hs, err := s.Script(hb, func() (int, error) { return 0, errors.New("no port needed") }); err != nil ||
		strings.TrimPrefix(hs, scriptPrelude) != "cat <<EOF > users &\nalice:s3cret\nEOF\nstarted $!\nwirespeed bench -benchtime=1ms\nstop_all\n" {
		t.Errorf("heredoc script: %v\n%s", err, hs)
	}
	if _, err := s.Script(Block{File: "x.md", Line: 1, Lang: "sh", Text: "sleep 1 & echo a\n"}, tooltest.FreePort); err == nil {
		t.Error("a command after a background one: no error")
	}
	progs, err := Programs(b)
	if err != nil || !reflect.DeepEqual(progs, []string{"hostname", "taskset"}) { // benchstat's pipeline is left out; $(hostname) runs
		t.Errorf("Programs = %q, %v", progs, err)
	}
}

// The script's harness fails when a command fails, when a background
// server never listens, and when one exits with an error; it succeeds
// when servers stop on SIGTERM.
func TestScriptHarness(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	s := specs(t)
	bin := wirespeedBin(t)
	r := root(t)
	port := tooltest.FreePort
	work := workDir(t, r)
	runBlock := func(b Block) error {
		script, err := s.Script(b, port)
		if err != nil {
			t.Fatal(err)
		}
		out, err := execScript(t, b, script, bin, work)
		t.Logf("%s: %v\n%s", b.Text, err, out)
		return err
	}
	run := func(text string) error { return runBlock(Block{File: "x.md", Line: 1, Lang: "sh", Text: text}) }
	if err := run("wirespeed smtp-sink -addr 127.0.0.1:2525 &\nwirespeed smtp-source -m 2 127.0.0.1:2525\n"); err != nil {
		t.Errorf("sink and source: %v", err)
	}
	if err := run("wirespeed smtp-source -m 2 -dial-timeout 100ms 127.0.0.1:2525\n"); err == nil {
		t.Error("a source with no sink: no error")
	}
	if err := run("wirespeed smtp-sink -addr 127.0.0.1:2525 &\nfalse\necho after\n"); err == nil {
		t.Error("a failing command: no error")
	}
	if err := run("sleep 0.2 && exit 3 &   # 127.0.0.1:2525 never listens\n"); err == nil {
		t.Error("a server that never listens: no error")
	}
	if err := run("wirespeed smtp-sink -addr 127.0.0.1:2525 -bare bogus &\n"); err == nil {
		t.Error("a server that fails at start: no error")
	}
	// The blocks of a file share a directory; env sets the environment.
	if err := run("echo kept > shared.txt\n"); err != nil {
		t.Fatal(err)
	}
	if err := run("[ \"$(cat shared.txt)\" = kept ]\n"); err != nil {
		t.Errorf("a file a block before wrote: %v", err)
	}
	if err := runBlock(Block{File: "x.md", Line: 1, Lang: "sh", Text: "[ \"$QUICK_SIZE\" = 4k ]\n", Env: []string{"QUICK_SIZE=4k"}}); err != nil {
		t.Errorf("env: %v", err)
	}
	if err := run("[ \"${QUICK_SIZE:-}\" = \"\" ]\n"); err != nil {
		t.Errorf("env of another block: %v", err)
	}
}

// A netns block makes network namespaces of its own: they are not in the
// system's list while it runs, nor after it.
func TestScriptNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("makes network namespaces, as root")
	}
	for _, p := range []string{"bash", "unshare", "mount", "ip"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s", p)
		}
	}
	s := specs(t)
	name := fmt.Sprintf("doccheck-test-%d", os.Getpid())
	b := Block{File: "x.md", Line: 1, Lang: "sh", Netns: true, Text: "ip netns add " + name + " && ip -n " + name + " link set lo up\n" +
		"ip netns list | grep -q " + name + "\n" +
		"ip netns exec " + name + " ip link show lo\n" +
		"[ -z \"$(ip -o link show | grep -v ': lo:')\" ]   # the block's own network: a loopback device only\n"}
	script, err := s.Script(b, tooltest.FreePort)
	if err != nil {
		t.Fatal(err)
	}
	out, err := execScript(t, b, script, wirespeedBin(t), workDir(t, root(t)))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	list, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v\n%s", err, list)
	}
	if strings.Contains(string(list), name) {
		t.Errorf("namespace %s is in the system's list after the block: %s", name, list)
	}
}

func TestHeaderRows(t *testing.T) {
	text := "go1.26.8 linux/amd64, 2 CPUs\n\nbenchmark   impl    MB/s     ns/op\nseed/IONull bufio   110829.6 37845\n" +
		"                            wirespeed 57778.8 72592\nengine  p50 µs  p99 µs\nsockperf 60.8 -\nnetio.Writer  delivered  dropped\nunbounded  40000  0.0%\n"
	want := []string{"benchmark impl MB/s ns/op", "engine p50 µs p99 µs", "netio.Writer delivered dropped"}
	if got := HeaderRows(text); !reflect.DeepEqual(got, want) {
		t.Errorf("HeaderRows = %q, want %q", got, want)
	}
}
