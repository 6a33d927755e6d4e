package smtpsourcecmd

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// postfixSource returns the path of Postfix's smtp-source, or ends the
// test (a failure under CI=true).
func postfixSource(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"smtp-source", "/usr/sbin/smtp-source"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	tooltest.Unavailable(t, "Postfix's smtp-source is not installed (apt-get install postfix)")
	return ""
}

// The same flags given to Postfix's smtp-source and to ours send the same
// commands and the same message data: -N numbers the recipients as it
// does, -o leaves out HELO and the header as it does, and flags grouped
// in one word are taken as its getopt takes them. The sink offers no
// SIZE, so ours sends no SIZE= either.
func TestSameAsPostfix(t *testing.T) {
	pf := postfixSource(t)
	noHelo := func(flags []string) bool { // -o, alone or first of a group
		return slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "-o") })
	}
	for _, flags := range [][]string{
		{"-N", "-r", "3", "-m", "4", "-d"},
		{"-o", "-m", "3", "-l", "300", "-d"},
		{"-o", "-N", "-r", "2", "-m", "2", "-l", "1000"},
		{"-oNdr2", "-m3", "-l", "500"}, // grouped, as getopt(3) takes them
	} {
		run := func(ours bool) (cmds []string, log string) {
			var digests bytes.Buffer
			s := sink{log: &digests}
			addr := s.start(t)
			args := append(slices.Clone(flags), "-M", "client.test", addr)
			if ours {
				var out, errb bytes.Buffer
				if err := Run(context.Background(), append([]string{"-q"}, args...), &out, &errb); err != nil {
					t.Fatalf("ours %q: %v\n%s", flags, err, out.String())
				}
			} else if out, err := exec.Command(pf, args...).CombinedOutput(); err != nil {
				t.Fatalf("Postfix's %q: %v\n%s", flags, err, out)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, c := range s.cmds {
				if !strings.HasPrefix(c, "EHLO") && !strings.HasPrefix(c, "HELO") {
					cmds = append(cmds, c)
				} else if noHelo(flags) {
					t.Errorf("%q: ours %v sent %q", flags, ours, c)
				}
			}
			return cmds, digests.String()
		}
		pfCmds, pfLog := run(false)
		wsCmds, wsLog := run(true)
		slices.Sort(pfCmds)
		slices.Sort(wsCmds)
		if !slices.Equal(pfCmds, wsCmds) {
			t.Errorf("%q: commands differ:\nPostfix %q\nours    %q", flags, pfCmds, wsCmds)
		}
		if noHelo(flags) && pfLog != wsLog {
			t.Errorf("%q: message data differs:\nPostfix %q\nours    %q", flags, pfLog, wsLog)
		}
	}
}
