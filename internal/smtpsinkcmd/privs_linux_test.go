package smtpsinkcmd

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The command's arguments in a child process of TestDropPrivileges,
// separated by this byte.
const (
	childEnv = "SMTPSINK_TEST_CHILD_ARGS"
	childSep = "\x1f"
)

// -R and -u, as Postfix's smtp-sink has them: once listening, the sink
// changes its root directory and becomes the user, all of its IDs and
// groups (seen in /proc), and dumps into the new root as that user. The
// command runs in a child process (this test binary again), as the
// change is the whole process's.
func TestDropPrivileges(t *testing.T) {
	if v, ok := os.LookupEnv(childEnv); ok {
		runChild(strings.Split(v, childSep))
	}
	if os.Geteuid() != 0 {
		tooltest.Unavailable(t, "-R and -u need root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	jail, elsewhere := t.TempDir(), t.TempDir()
	os.Chmod(filepath.Dir(jail), 0o755)
	os.Chmod(jail, 0o777) // nobody makes dumps/ in it
	cmd := exec.Command(os.Args[0], "-test.run=^TestDropPrivileges$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{"-u", "nobody", "-R", jail, "-d", "dumps/", "127.0.0.1:0"}, childSep))
	cmd.Dir = elsewhere // where dumps/ would go without -R
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the sink: %v", err)
		}
	}()
	br := bufio.NewReader(out)
	first, err := br.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on ")
	if !ok {
		t.Fatalf("first line %q, %v", first, err)
	}
	go br.WriteTo(new(strings.Builder)) // the summary, at the end

	pid := cmd.Process.Pid
	if root, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid)); err != nil || root != jail {
		t.Errorf("root directory %q, %v; want %s", root, err, jail)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Uid:\t" + strings.Repeat(nobody.Uid+"\t", 3) + nobody.Uid + "\n", // real, effective, saved, file system
		"Gid:\t" + strings.Repeat(nobody.Gid+"\t", 3) + nobody.Gid + "\n",
	} {
		if !strings.Contains(string(status), want) {
			t.Errorf("/proc/%d/status has no line %q:\n%s", pid, want, status)
		}
	}
	for _, l := range strings.Split(string(status), "\n") {
		if g, ok := strings.CutPrefix(l, "Groups:"); ok && strings.Contains(" "+g+" ", " 0 ") {
			t.Errorf("still in group 0: %q", l)
		}
	}

	session := []string{"HELO client.test", "MAIL FROM:<a@example.com>", "RCPT TO:<b@example.com>", "DATA", "hello\r\n.", "QUIT"}
	if rs := converse(t, addr, session...); rs[5].code != 250 {
		t.Fatalf("the message: %v", rs)
	}
	dumps, _ := filepath.Glob(filepath.Join(jail, "dumps", "*"))
	if len(dumps) != 1 {
		t.Fatalf("dumps in the new root: %q", dumps)
	}
	fi, err := os.Stat(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	if uid := fmt.Sprint(fi.Sys().(*syscall.Stat_t).Uid); uid != nobody.Uid {
		t.Errorf("the dump's owner %s, want nobody (%s)", uid, nobody.Uid)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "dumps")); err == nil {
		t.Errorf("dumps/ made outside the new root")
	}
}

// runChild runs the command with args until SIGTERM, in the child process
// of TestDropPrivileges, and exits.
func runChild(args []string) {
	if e := os.Getenv("SMTPSINK_TEST_ENGINE"); e != "" {
		args = append([]string{"-engine", e}, args...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, args, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A user who does not exist, or a root directory that does not, stops
// the command before it serves, with nothing changed.
func TestDropPrivilegesErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-u", "no-such-user-of-wirespeed", "127.0.0.1:0"},
		{"-R", filepath.Join(t.TempDir(), "missing"), "127.0.0.1:0"},
	} {
		var out strings.Builder
		err := Run(context.Background(), args, &out, new(strings.Builder))
		if err == nil || strings.Contains(out.String(), "listening on") {
			t.Errorf("%q: %v, printed %q; want an error before listening", args, err, out.String())
		}
	}
}
