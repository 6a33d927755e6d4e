package main

import (
	"bytes"
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
		{[]string{"help"}, 0, "  sum          print or check"},
		{[]string{"help"}, 0, "  smtp-source  SMTP/LMTP load client"},
		{[]string{"smtp-sink", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"smtp-source", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"nosuch"}, 2, `wirespeed: unknown command "nosuch"`},
		{[]string{"bench", "nosuchsuite"}, 2, "wirespeed bench: unknown suite \"nosuchsuite\"\n"},
		{[]string{"bench", "net", "-engines", "x"}, 2, "wirespeed bench net: unknown engine \"x\"\n"},
		{[]string{"bench", "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"serve", "-engine", "x", "-addr", "127.0.0.1:0"}, 1, "wirespeed serve: unknown engine \"x\""},
		{[]string{"tcpperf", "-mode", "http", "-q"}, 1, "wirespeed tcpperf: bad configuration: mode \"http\""},
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
	if status, stdout, _ := runMain("sum"); status != 0 || stdout != "d41d8cd98f00b204e9800998ecf8427e  -\n" {
		t.Errorf("sum of empty stdin: %d %q", status, stdout)
	}
}
