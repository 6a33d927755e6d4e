package smtpsinkcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
)

// listenSyslog takes path as a syslog socket (unixgram) until the test
// ends, and returns the messages that come to it, each after its
// "TAG[PID]: " (as they arrive: read them once the sender is done).
func listenSyslog(t *testing.T, path string) func() []string {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o666) // Postfix's smtp-sink logs as nobody
	t.Cleanup(func() { c.Close(); os.Remove(path) })
	return func() []string {
		var msgs []string
		buf := make([]byte, 64<<10)
		for {
			// Both sinks log a command before its reply, and a datagram is
			// in this socket's queue when its send returns: once the
			// client has read the last reply, every message is here, and
			// the deadline only says there is no more.
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := c.Read(buf)
			if err != nil {
				return msgs
			}
			m := strings.TrimSuffix(string(buf[:n]), "\n")
			if !strings.HasPrefix(m, "<22>") { // facility mail, level info
				t.Errorf("message %q: not mail.info", m)
			}
			_, m, ok := strings.Cut(m, "]: ")
			if !ok {
				t.Errorf("message %q: no TAG[PID]", m)
			}
			msgs = append(msgs, m)
		}
	}
}

// The session -s is tried with: commands in either case, separated by a
// tab or more than one blank, arguments that are not printable ASCII or
// longer than 100 bytes, a command not named, the end of the data.
var syslogSession = []string{
	"ehlo client.test", "MAIL\tFROM:<\u00e9\tx@example.com>", "RCPT  TO:<" + strings.Repeat("x", 150) + "@example.com>",
	"NOOP", "DATA", "hi\r\n.", "VRFY   ", "RSET", "QUIT",
}

const syslogCommands = "mail,RCPT ehlo,noop,vrfy,.,QUIT"

// -s logs the commands it names as Postfix's smtp-sink -s does: the same
// messages, at mail.info, to the system's syslog socket (/dev/log), here
// the test's. Needs /dev/log free, which a system running a syslog
// daemon has not.
func TestSyslogLikePostfix(t *testing.T) {
	if _, err := os.Lstat("/dev/log"); !errors.Is(err, fs.ErrNotExist) {
		t.Skipf("/dev/log is this system's (%v): TestSyslog covers -s without Postfix", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("making /dev/log needs root")
	}
	read := listenSyslog(t, "/dev/log")
	for _, c := range []struct {
		args    []string
		session []string
		n       int // messages logged
	}{
		{[]string{"-s", syslogCommands}, syslogSession, 7},
		// Forced replies are logged; commands turned off are not.
		{[]string{"-s", "ehlo,helo,xclient,xforward,mail,rcpt,noop,quit", "-e", "-C", "-F", "-f", "mail", "-r", "rcpt"},
			[]string{"EHLO x", "HELO x", "XCLIENT NAME=x", "XFORWARD NAME=x", "MAIL FROM:<a@b>", "RCPT TO:<c@d>", "NOOP", "QUIT"}, 5},
	} {
		var got [2][]string
		for i, who := range []string{"postfix", "wirespeed"} {
			var addr string
			if who == "postfix" {
				addr = net.JoinHostPort("127.0.0.1", startPostfixSink(t, "127.0.0.1", "", c.args...))
			} else {
				addr = startOurs(t, append(c.args, "127.0.0.1:0")...)
			}
			read() // the start-up check's QUIT, if any
			converse(t, addr, c.session...)
			got[i] = read()
		}
		if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") || len(got[0]) != c.n {
			t.Errorf("%q: Postfix's smtp-sink logged:\n%q\nours:\n%q", c.args, got[0], got[1])
		}
	}
}

// -s with -syslog: the same lines to a socket of the test's.
func TestSyslog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	read := listenSyslog(t, path)
	addr := startOurs(t, "-s", syslogCommands, "-syslog", "unixgram:"+path, "127.0.0.1:0")
	converse(t, addr, syslogSession...)
	want := []string{
		"ehlo client.test", "MAIL FROM:<???x@example.com>", "RCPT  TO:<" + strings.Repeat("x", 95),
		"NOOP ", ". ", "VRFY   ", "QUIT ",
	}
	if got := read(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged %q, want %q", got, want)
	}
}

// A -syslog value that names nothing to dial is a usage error naming the
// flag, found before anything starts (it said "-s: -syslog ...", or
// "-s: dial udp: address 99999: invalid port", exit 1). A host that is
// not found (as it is dialled) and a syslog socket that is not there are
// named but exit 1, as smtp-source does for its server: the network or
// the system, not the command line, must change.
func TestSyslogAddress(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "log")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		addr   string
		want   string
		status int
	}{
		{"bogus", "want NETWORK:ADDRESS", 2},
		{":127.0.0.1:514", "want NETWORK:ADDRESS", 2},
		{"udp:", "want NETWORK:ADDRESS", 2},
		{"udp:127.0.0.1:99999", "port 99999 out of range", 2},
		{"udp:::1:514", "want HOST:PORT", 2},
		{"udp:127.0.0.1", "want HOST:PORT", 2},
		{"tcp:127.0.0.1:", "names no port", 2},
		{"udp:127.0.0.1:0", "port 0: no syslog", 2}, // it ran, every line lost
		{"tcp:127.0.0.1:00", "port 00: no syslog", 2},
		{"sctp:127.0.0.1:514", `unknown network "sctp"`, 2},
		{"udp:no such host.invalid:514", "no such host", 1}, // as smtp-source's server
		{"unixgram:" + missing, "no such file or directory", 1},
	} {
		// A ctx done already: a sink that starts stops at once
		// (syslog.Dial does not take it, and -addr needs no lookup).
		err := Run(done, []string{"-s", "MAIL", "-syslog", c.addr, "-addr", "127.0.0.1:0"}, io.Discard, io.Discard)
		want := fmt.Sprintf("smtp-sink: -syslog %q: ", c.addr)
		if status, _ := cli.Status(err); status != c.status || !strings.HasPrefix(fmt.Sprint(err), want) || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("-syslog %s: %v (status %d), want %q in front, saying %q, exit status %d", c.addr, err, status, want, c.want, c.status)
		}
	}
}
