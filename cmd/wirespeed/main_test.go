package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

func runMain(args ...string) (status int, stdout, stderr string) {
	var out, errb bytes.Buffer
	status = run(args, strings.NewReader(""), &out, &errb)
	return status, out.String(), errb.String()
}

// The dispatcher lists the commands, maps errors to exit statuses and
// prints each error once, prefixed with the command unless it names it.
func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		stderr string // a line stderr must contain
	}{
		{nil, 2, "  tcpperf    "},
		{[]string{"smtp-sink", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"smtp-source", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"nosuch"}, 2, `wirespeed: unknown command "nosuch"`},
		{[]string{"bench", "nosuchsuite"}, 2, "wirespeed bench: unknown suite \"nosuchsuite\"\n"},
		{[]string{"bench", "net", "-engines", "x"}, 2, "wirespeed bench net: unknown engine \"x\"\n"},
		{[]string{"bench", "net", "-engines", "std", "-points", "", "-sockperf=false"}, 2, "wirespeed bench net: -points \"\": no points"},
		{[]string{"bench", "net", "-engines", "std", "-points", "a=echo/1/100/0", "-overload", "0", "-sockperf=false", "-exe", "/nonexistent"}, 2, "wirespeed bench net: -exe /nonexistent: "},
		{[]string{"bench", "smtp", "-postfix=false", "-exe", "/nonexistent"}, 2, "wirespeed bench smtp: -exe /nonexistent: "},
		{[]string{"bench", "net", "-points", "a=echo/10/0/0"}, 2, `wirespeed bench net: point "a=echo/10/0/0": DEPTH 0: closed loop (QPS 0) wants 1 or more in flight per connection`},
		{[]string{"bench", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"bench", "digest", "net"}, 2, "wirespeed bench: suite net cannot be combined with digest: net runs a harness of its own"},
		{[]string{"bench", "-long", "smtp"}, 2, "wirespeed bench: smtp takes no -long: it runs alone"},
		{[]string{"bench", "-run", "x", "tlspipe"}, 2, "wirespeed bench: tlspipe takes no -run"},
		{[]string{"bench", "-json", "net", "-engines", "x"}, 2, "wirespeed bench net: unknown engine \"x\"\n"},
		{[]string{"bench", "-json", "smtp", "-s", "0"}, 2, "wirespeed bench smtp: -s and -count must be positive"},
		{[]string{"help", "nosuch"}, 2, `wirespeed: unknown command "nosuch"`},
		{[]string{"help", "sum", "x"}, 2, `wirespeed: help sum x: sum has no subcommand "x"`},
		{[]string{"help", "tcpperf", "merge", "x"}, 2, `wirespeed: help tcpperf merge x: tcpperf has no subcommand "merge x"`},
		{[]string{"serve", "-engine", "x", "-addr", "127.0.0.1:0"}, 2, "wirespeed serve: unknown engine \"x\""},
		{[]string{"serve", "-tls-cert", "cert.pem", "-addr", "127.0.0.1:0"}, 2, "wirespeed serve: -tls-cert and -tls-key go together"},
		{[]string{"tcpperf", "-mode", "http", "-q"}, 2, "wirespeed tcpperf: -mode: bad configuration: mode \"http\""},
		{[]string{"sum", "--bogus"}, 1, "wirespeed sum: unrecognized option '--bogus'\n"},
	} {
		status, _, stderr := runMain(c.args...)
		if status != c.status || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, status, stderr, c.status, c.stderr)
		}
		if strings.Count(stderr, "wirespeed tcpperf: tcpperf") > 0 || strings.Count(stderr, "unknown suite") > 1 {
			t.Errorf("%q: error printed twice or prefixed twice: %q", c.args, stderr)
		}
	}
	// An error naming the command's package is named by the command.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // refused from now on (unless another test takes the port)
	status, _, stderr := runMain("smtp-source", "-q", "-m", "1", ln.Addr().String())
	if want := "wirespeed smtp-source: no connection could be opened to " + ln.Addr().String(); status != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("smtp-source to a closed port: status %d, stderr %q; want 1 and %q", status, stderr, want)
	}
	if status, stdout, _ := runMain("sum"); status != 0 || stdout != "d41d8cd98f00b204e9800998ecf8427e  -\n" {
		t.Errorf("sum of empty stdin: %d %q", status, stdout)
	}
}

// SIGINT and SIGTERM cancel the commands that run servers, loads or child
// processes, which then stop them; bench died on them and left its
// children (serve, tcpperf, smtp-sink, smtp-source) running. sum dies on
// them, as md5sum does.
func TestInterrupt(t *testing.T) {
	for _, c := range commands() {
		if want := c.name != "sum"; c.interrupt != want {
			t.Errorf("%s: interrupt %v, want %v", c.name, c.interrupt, want)
		}
	}
}

// Help is asked for with help, -h, -help or --help, alone for the commands,
// or with a command for its usage (as CMD -h, or sum --help): on stdout,
// with exit status 0.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // what stdout must contain
	}{
		{[]string{"help"}, []string{"usage: wirespeed <command> [arguments]\n", "  sum          print or check", "  smtp-source  SMTP/LMTP load client", "wirespeed help CMD"}},
		{[]string{"-h"}, []string{"usage: wirespeed <command>", "  tcpperf    "}},
		{[]string{"-help"}, []string{"usage: wirespeed <command>", "  bench    "}},
		{[]string{"--help"}, []string{"usage: wirespeed <command>", "  serve    "}},
		{[]string{"help", "sum"}, []string{"Usage: wirespeed sum [OPTION]... [FILE]...\n", "--algorithm=NAME"}},
		{[]string{"-h", "sum"}, []string{"Usage: wirespeed sum"}},
		{[]string{"help", "bench"}, []string{"usage: wirespeed bench [flags] [suite...]\n", "suites: ", " net smtp tlspipe\n", "  -benchtime duration"}},
		{[]string{"help", "serve"}, []string{"usage: wirespeed serve ", "  -engine string"}},
		{[]string{"help", "tcpperf"}, []string{"usage: wirespeed tcpperf ", "  -conns int"}},
		{[]string{"help", "smtp-sink"}, []string{"usage: wirespeed smtp-sink ", "  -addr string"}},
		{[]string{"help", "smtp-source"}, []string{"usage: wirespeed smtp-source ", "  -pipelining"}},
		{[]string{"help", "tcpperf", "merge"}, []string{"usage: wirespeed tcpperf merge ", "  -plot "}},
		{[]string{"help", "bench", "net"}, []string{"usage: wirespeed bench net [flags]\n", "  -engines string"}},
		{[]string{"help", "bench", "tlspipe"}, []string{"usage: wirespeed bench tlspipe -listen ADDR [flags]\n", "  -connect string"}},
		{[]string{"help", "help"}, []string{"usage: wirespeed <command> [arguments]\n"}},
		{[]string{"bench", "-h"}, []string{"usage: wirespeed bench [flags] [suite...]\n"}},
		{[]string{"bench", "-json", "net", "-help"}, []string{"usage: wirespeed bench net [flags]\n", "  -engines string"}},
		{[]string{"bench", "smtp", "-h"}, []string{"usage: wirespeed bench smtp [flags]\n"}},
	} {
		status, stdout, stderr := runMain(c.args...)
		if status != 0 || stderr != "" {
			t.Errorf("%q: status %d, stderr %q; want 0 and nothing", c.args, status, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: stdout lacks %q:\n%s", c.args, w, stdout)
			}
		}
	}
	// A command asked for its flags prints them on stdout, as help CMD
	// does (they went to stderr, as the flag package has it, so `serve
	// -help | less` showed nothing), and succeeds. Help that cannot be
	// written is an error (it exited 0).
	for _, args := range [][]string{{"serve", "-h"}, {"tcpperf", "-h"}, {"tcpperf", "merge", "-h"}, {"smtp-sink", "-help"}, {"smtp-source", "-h"}} {
		if status, stdout, stderr := runMain(args...); status != 0 || !strings.Contains(stdout, "usage: wirespeed") || stderr != "" {
			t.Errorf("%q: status %d, stdout %.40q, stderr %q; want 0 and the usage on stdout", args, status, stdout, stderr)
		}
	}
	// (help sum's went to stdout too, and was lost.)
	for _, args := range [][]string{{"help"}, {"serve", "-help"}, {"help", "smtp-sink"}, {"tcpperf", "merge", "-h"}, {"help", "sum"}, {"help", "tcpperf", "merge"}} {
		var stderr strings.Builder
		if status := run(args, strings.NewReader(""), fullWriter{}, &stderr); status != 1 || !strings.Contains(stderr.String(), "write error") {
			t.Errorf("%q to a full disk: status %d, stderr %q; want 1 and the error", args, status, stderr.String())
		}
	}
	// A bad flag is status 2, with the flag package's reason and where
	// the flags are, not the whole list (smtp-sink's -h wants a hostname).
	for _, c := range []struct{ cmd, bad string }{{"serve", "-nosuchflag"}, {"smtp-sink", "-h"}, {"smtp-source", "-m=x"}, {"tcpperf merge", "-x"},
		{"bench", "-x"}, {"bench net", "-x"}, {"bench smtp", "-s=x"}, {"bench tlspipe", "-x"}} {
		args := append(strings.Fields(c.cmd), c.bad)
		status, stdout, stderr := runMain(args...)
		if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); status != 2 || stdout != "" || len(lines) != 2 ||
			lines[1] != "Run 'wirespeed "+c.cmd+" -help' for usage." {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and two lines", args, status, stdout, stderr)
		}
	}
}

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errNoSpace }
