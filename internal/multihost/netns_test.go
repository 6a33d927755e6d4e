//go:build linux

package multihost

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// nsPrefix begins the names of the namespaces the tests make, followed by
// the test process's id: namespaces left by a process that no longer runs
// (one that was killed before its cleanup) are removed by the next run.
const nsPrefix = "wsmh"

// serverIP is the server's address on the test network, in 198.18.0.0/15,
// the range RFC 2544 reserves for benchmark tests; the load hosts get the
// next ones.
const serverIP = "198.18.0.1"

// A testNet is a server namespace and load namespaces, each load host on a
// veth pair to a bridge in the server's namespace, with no link to the
// namespace the test runs in: the tests' traffic stays between them.
type testNet struct {
	ip     string // the ip command
	server string
	loads  []string
}

// newNet makes the namespaces, or ends the test: it skips without root or
// the ip command, and fails instead under CI=true. The namespaces are
// removed when the test ends, whether it passes or fails.
func newNet(t *testing.T, loads int) *testNet {
	t.Helper()
	if testing.Short() {
		t.Skip("makes network namespaces and builds the wirespeed binary")
	}
	ip := tooltest.Path(t, "ip")
	if os.Geteuid() != 0 {
		tooltest.Unavailable(t, "network namespaces need root (uid %d)", os.Geteuid())
	}
	n := &testNet{ip: ip}
	removeStale(t, ip)
	name := func(host string) string { return fmt.Sprintf("%s%d-%s", nsPrefix, os.Getpid(), host) }
	n.server = name("srv")
	add := func(ns string) {
		n.run(t, "netns", "add", ns)
		t.Cleanup(func() {
			if out, err := exec.Command(ip, "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v: %s", ns, err, out)
			}
		})
		n.run(t, "-n", ns, "link", "set", "lo", "up")
	}
	add(n.server)
	n.run(t, "-n", n.server, "link", "add", "br0", "type", "bridge")
	n.run(t, "-n", n.server, "addr", "add", serverIP+"/24", "dev", "br0")
	n.run(t, "-n", n.server, "link", "set", "br0", "up")
	for i := range loads {
		ns := name(fmt.Sprintf("load%d", i+1))
		add(ns)
		port := fmt.Sprintf("v%d", i+1)
		n.run(t, "-n", n.server, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
		n.run(t, "-n", n.server, "link", "set", port, "master", "br0", "up")
		n.run(t, "-n", ns, "addr", "add", fmt.Sprintf("198.18.0.%d/24", i+2), "dev", "eth0")
		n.run(t, "-n", ns, "link", "set", "eth0", "up")
		n.loads = append(n.loads, ns)
	}
	return n
}

// run runs ip with args, or fails the test.
func (n *testNet) run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(n.ip, args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// removeStale removes the namespaces of earlier test processes that have
// ended.
func removeStale(t *testing.T, ip string) {
	out, err := exec.Command(ip, "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(ns, nsPrefix)
		pid, _, ok2 := strings.Cut(rest, "-")
		p, err := strconv.Atoi(pid)
		if !ok || !ok2 || err != nil || p == os.Getpid() || syscall.Kill(p, 0) != syscall.ESRCH {
			continue
		}
		if out, err := exec.Command(ip, "netns", "del", ns).CombinedOutput(); err != nil {
			t.Logf("stale namespace %s: ip netns del: %v: %s", ns, err, out)
		}
	}
}

// command returns the command that runs args in namespace ns.
func (n *testNet) command(ns string, args ...string) *exec.Cmd {
	return exec.Command(n.ip, append([]string{"netns", "exec", ns}, args...)...)
}

// startServer runs a server (a wirespeed command that prints "listening on
// ADDR" first) in the server namespace, and returns its address. It is
// stopped with SIGTERM when the test ends; stop stops it sooner and
// returns how it exited.
func (n *testNet) startServer(t *testing.T, args ...string) (addr string, stop func() error) {
	t.Helper()
	cmd := n.command(n.server, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var exited error
	stopped := false
	stop = func() error {
		if stopped {
			return exited
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case exited = <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			exited = errors.New("did not stop on SIGTERM")
		}
		return exited
	}
	t.Cleanup(func() { stop() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
		done <- cmd.Wait()
	}()
	select {
	case line := <-lines:
		addr, ok := strings.CutPrefix(line, "listening on ")
		if !ok {
			t.Fatalf("%s: first line %q", strings.Join(args, " "), line)
		}
		return addr, stop
	case <-time.After(time.Minute):
		t.Fatalf("%s: not listening within a minute", strings.Join(args, " "))
	}
	return "", nil
}

// buildWirespeed builds the wirespeed command (with the test's race
// setting, so that the build cache is shared) into a temporary directory.
func buildWirespeed(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "wirespeed")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
		// A race-enabled process sleeps 1s at exit (ThreadSanitizer's
		// atexit_sleep_ms).
		t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	out, err := exec.Command("go", append(args, "github.com/wirespeed/wirespeed/cmd/wirespeed")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
