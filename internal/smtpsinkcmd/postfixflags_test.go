package smtpsinkcmd

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Postfix smtp-sink's flags -4 -6 -a -b -B -E -P -S and -T, which this
// sink refused before, do here what they do there: each case runs
// Postfix's smtp-sink and this one with the same flags and compares what
// a client sees.

// postfixSinkPath is Postfix's smtp-sink (Debian keeps it out of PATH).
func postfixSinkPath(t *testing.T) string {
	if p, err := exec.LookPath("smtp-sink"); err == nil {
		return p
	}
	return tooltest.Path(t, "/usr/sbin/smtp-sink")
}

// postfixCmd is the command line of Postfix's smtp-sink with args, on
// addr with a backlog of 10, as nobody when run as root (it refuses root
// otherwise).
func postfixCmd(t *testing.T, addr string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "nobody"}, args...)
	}
	return exec.Command(postfixSinkPath(t), append(args, addr, "10")...)
}

// startPostfixSink runs Postfix's smtp-sink with args on a free port of
// host until the test ends, and returns the port, once a connection to
// dial (host if empty) on it has been greeted.
func startPostfixSink(t *testing.T, host, dial string, args ...string) string {
	t.Helper()
	if dial == "" {
		dial = host
	}
	var out syncBuffer
	for try := 0; try < 5; try++ {
		p, err := tooltest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(p)
		cmd := postfixCmd(t, net.JoinHostPort(host, port), args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			select {
			case <-exited:
				deadline = time.Time{} // taken meanwhile, or refused: another try
				continue
			default:
			}
			c, err := net.Dial("tcp", net.JoinHostPort(dial, port))
			if err != nil {
				continue // not listening yet
			}
			c.SetDeadline(time.Now().Add(time.Minute))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Write([]byte("QUIT\r\n"))
			c.Close()
			if err == nil && strings.HasPrefix(line, "220") {
				t.Cleanup(func() { cmd.Process.Kill(); <-exited })
				return port
			}
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("Postfix's smtp-sink did not start: %s", out.String())
	return ""
}

// startOurs runs this smtp-sink with args (the address among them, in
// Postfix's place) until the test ends, and returns the address it
// listens on.
func startOurs(t *testing.T, args ...string) string {
	t.Helper()
	if e := os.Getenv("SMTPSINK_TEST_ENGINE"); e != "" {
		args = append([]string{"-engine", e}, args...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, args, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	br := bufio.NewReader(pr)
	first, err := br.ReadString('\n')
	go io.Copy(io.Discard, br) // the summary, at the end
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run %q: %v", args, err)
		}
	})
	addr, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on ")
	if !ok {
		t.Fatalf("Run %q: first line %q, %v", args, first, err)
	}
	return addr
}

// A reply as a client reads it: its code and its lines' texts, joined by
// newlines.
type reply struct {
	code int
	text string
}

// converse dials addr, reads the greeting, sends each command and reads
// its reply; it returns the greeting and the replies.
func converse(t *testing.T, addr string, cmds ...string) []reply {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Minute))
	c := textproto.NewConn(nc)
	var rs []reply
	for i := 0; i <= len(cmds); i++ {
		if i > 0 {
			if err := c.PrintfLine("%s", cmds[i-1]); err != nil {
				t.Fatal(err)
			}
		}
		code, text, err := c.ReadResponse(0)
		var perr *textproto.Error
		if err != nil && !errors.As(err, &perr) {
			t.Fatalf("%s: after %q: %v", addr, cmds[:i], err)
		}
		rs = append(rs, reply{code, text})
	}
	return rs
}

func TestPostfixFlagsReplies(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		cmds  []string
		check func(t *testing.T, rs []reply)
	}{
		{
			name: "-P greets as a PIX and refuses EHLO",
			args: []string{"-P"},
			cmds: []string{"EHLO client.test", "HELO client.test", "QUIT"},
			check: func(t *testing.T, rs []reply) {
				if rs[0] != (reply{220, "********"}) || rs[1].code/100 != 5 || rs[2].code != 250 {
					t.Errorf("greeting, EHLO, HELO: %v; want 220 ********, 5XX, 250", rs)
				}
			},
		},
		{
			name: "-E -a announce neither ENHANCEDSTATUSCODES nor AUTH",
			args: []string{"-E", "-a"},
			cmds: []string{"EHLO client.test", "MAIL FROM:<a@example.com>", "QUIT"},
			check: func(t *testing.T, rs []reply) {
				if strings.Contains(rs[1].text, "ENHANCEDSTATUSCODES") || strings.Contains(rs[1].text, "AUTH") {
					t.Errorf("EHLO reply %q", rs[1].text)
				}
				if rs[2] != (reply{250, "2.1.0 Ok"}) {
					t.Errorf("MAIL: %v; want 250 2.1.0 Ok (the codes stay)", rs[2])
				}
			},
		},
		{
			name: "no -E announces ENHANCEDSTATUSCODES",
			cmds: []string{"EHLO client.test", "QUIT"},
			check: func(t *testing.T, rs []reply) {
				if !strings.Contains(rs[1].text, "\nENHANCEDSTATUSCODES") {
					t.Errorf("EHLO reply %q", rs[1].text)
				}
			},
		},
		{
			name: "-b and -B are the replies of -r and -f",
			args: []string{"-b", "451 4.7.1 try later", "-B", "554 5.7.1 go away", "-r", "MAIL", "-f", "RCPT"},
			cmds: []string{"HELO client.test", "MAIL FROM:<a@example.com>", "RCPT TO:<b@example.com>", "QUIT"},
			check: func(t *testing.T, rs []reply) {
				if rs[2] != (reply{451, "4.7.1 try later"}) || rs[3] != (reply{554, "5.7.1 go away"}) {
					t.Errorf("MAIL, RCPT: %v, %v", rs[2], rs[3])
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, who := range []string{"postfix", "wirespeed"} {
				var addr string
				if who == "postfix" {
					addr = net.JoinHostPort("127.0.0.1", startPostfixSink(t, "127.0.0.1", "", c.args...))
				} else {
					addr = startOurs(t, append(c.args, "127.0.0.1:0")...)
				}
				t.Run(who, func(t *testing.T) { c.check(t, converse(t, addr, c.cmds...)) })
			}
		})
	}
}

// A -b or -B reply of the wrong class, or no reply code, is refused by
// both; "4XX-TEXT", which Postfix's takes, is refused here (the client
// would wait for a last line that never comes).
func TestPostfixFlagsBadBounce(t *testing.T) {
	for _, args := range [][]string{
		{"-b", "550 x"}, {"-B", "450 x"}, {"-b", "4xx y"}, {"-b", " 451 a"}, {"-b", "4510 a"},
		{"-B", "600 z"}, {"-b", "399 z"},
	} {
		p, err := tooltest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(p)
		cmd := postfixCmd(t, addr, args...)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("Postfix's smtp-sink %q started (%s); the test means a usage error", args, out)
		}
		err = Run(context.Background(), append(args, addr), io.Discard, io.Discard)
		if !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	err := Run(context.Background(), []string{"-b", "451-a", "127.0.0.1:0"}, io.Discard, io.Discard)
	if !errors.Is(err, cli.ErrUsage) {
		t.Errorf("-b 451-a: %v, want a usage error", err)
	}
}

// -4 and -6 with a port alone listen on that version's wildcard address
// only.
func TestPostfixFlagsIPVersion(t *testing.T) {
	if _, err := os.Stat("/proc/net/if_inet6"); err != nil {
		tooltest.Unavailable(t, "no IPv6 here: %v", err)
	}
	for _, c := range []struct{ flag, on, off string }{{"-4", "127.0.0.1", "::1"}, {"-6", "::1", "127.0.0.1"}} {
		for _, who := range []string{"postfix", "wirespeed"} {
			t.Run(c.flag+"/"+who, func(t *testing.T) {
				var port string
				if who == "postfix" {
					port = startPostfixSink(t, "", c.on, c.flag)
				} else {
					p, err := tooltest.FreePort()
					if err != nil {
						t.Fatal(err)
					}
					_, port, _ = net.SplitHostPort(startOurs(t, c.flag, strconv.Itoa(p)))
				}
				if rs := converse(t, net.JoinHostPort(c.on, port), "QUIT"); rs[0].code != 220 {
					t.Errorf("on %s: %v", c.on, rs)
				}
				if nc, err := net.Dial("tcp", net.JoinHostPort(c.off, port)); err == nil {
					nc.Close()
					t.Errorf("%s: a connection to %s was taken", c.flag, c.off)
				}
			})
		}
	}
	if err := Run(context.Background(), []string{"-4", "-6", "127.0.0.1:0"}, io.Discard, io.Discard); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("-4 -6: %v, want a usage error", err)
	}
}

var skmemRE = regexp.MustCompile(`rb(\d+),t\d+,tb(\d+)`)

// -T sets the buffers of the listening socket, which its connections
// take on: ss(8) shows the same sizes for a connection to each sink.
func TestPostfixFlagsWindow(t *testing.T) {
	ss := tooltest.Path(t, "ss")
	buffers := func(t *testing.T, addr string) string {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(time.Minute))
		if _, err := bufio.NewReader(nc).ReadString('\n'); err != nil { // accepted and greeted
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(addr)
		_, cport, _ := net.SplitHostPort(nc.LocalAddr().String())
		out, err := exec.Command(ss, "-Htmn", "state", "established", "( sport = :"+port+" and dport = :"+cport+" )").CombinedOutput()
		m := skmemRE.FindStringSubmatch(string(out))
		if err != nil || m == nil {
			t.Fatalf("ss: %v: %s", err, out)
		}
		return "rb" + m[1] + " tb" + m[2]
	}
	var got [2]string
	for i, who := range []string{"postfix", "wirespeed"} {
		var addr string
		if who == "postfix" {
			addr = net.JoinHostPort("127.0.0.1", startPostfixSink(t, "127.0.0.1", "", "-T", "8192"))
		} else {
			addr = startOurs(t, "-T", "8192", "127.0.0.1:0")
		}
		got[i] = buffers(t, addr)
	}
	if got[0] != got[1] || !strings.HasPrefix(got[0], "rb16384 ") && !strings.HasPrefix(got[0], "rb8192 ") {
		t.Errorf("-T 8192: Postfix's connection has %s, ours %s", got[0], got[1])
	}
	if plain := buffers(t, startOurs(t, "127.0.0.1:0")); plain == got[1] {
		t.Errorf("without -T: %s, as with it", plain)
	}
}

// -S begins each dumped transaction with its string, C's escapes
// expanded as Postfix's smtp-sink expands them.
func TestPostfixFlagsDumpStart(t *testing.T) {
	starts := []string{`START\101\x41\q\\\n\tZ\0011`, `\777x`, `a\`, `\400no`, `\8`, `b\0c`, `\e\E\?\"`, `\a\b\f\r\v`, `\1234`}
	session := []string{"HELO client.test", "MAIL FROM:<a@example.com>", "RCPT TO:<b@example.com>", "DATA", "hello\r\n.", "QUIT"}
	for _, s := range starts {
		var got [2]string
		for i, who := range []string{"postfix", "wirespeed"} {
			dir := t.TempDir()
			os.Chmod(filepath.Dir(dir), 0o755) // Postfix's writes as nobody
			os.Chmod(dir, 0o777)
			args := []string{"-S", s, "-d", dir + "/"}
			var addr string
			if who == "postfix" {
				addr = net.JoinHostPort("127.0.0.1", startPostfixSink(t, "127.0.0.1", "", args...))
			} else {
				addr = startOurs(t, append(args, "127.0.0.1:0")...)
			}
			rs := converse(t, addr, session...)
			if rs[5].code != 250 {
				t.Fatalf("%s: the message: %v", who, rs)
			}
			var files []string
			for deadline := time.Now().Add(time.Minute); len(files) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				files, _ = filepath.Glob(filepath.Join(dir, "[0-9a-f]*")) // Postfix's writes it after its reply: poll
			}
			if len(files) != 1 {
				t.Fatalf("%s: dumps %q", who, files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			start, _, ok := strings.Cut(string(b), "X-Client-Addr: ")
			if !ok {
				t.Fatalf("%s: dump %q", who, b)
			}
			got[i] = start
		}
		if got[0] != got[1] || got[0] != unescape(s) {
			t.Errorf("-S %q: Postfix's dump begins %q, ours %q (unescape: %q)", s, got[0], got[1], unescape(s))
		}
	}
	if err := Run(context.Background(), []string{"-S", "x", "127.0.0.1:0"}, io.Discard, io.Discard); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("-S without -d or -D: %v, want a usage error", err)
	}
}

// -H waits after the 354 before reading the message: with -T's small
// window, a client writing 4 MiB from a small socket buffer finishes no
// sooner than -H after the 354, from either sink. (Only a lower bound:
// a slow machine makes the write later, never sooner.)
func TestPostfixFlagsReadDelay(t *testing.T) {
	const delay = time.Second
	args := []string{"-H", "1", "-T", "8192"}
	for _, who := range []string{"postfix", "wirespeed"} {
		t.Run(who, func(t *testing.T) {
			var addr string
			if who == "postfix" {
				addr = net.JoinHostPort("127.0.0.1", startPostfixSink(t, "127.0.0.1", "", args...))
			} else {
				addr = startOurs(t, append(args, "127.0.0.1:0")...)
			}
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.(*net.TCPConn).SetWriteBuffer(8192)
			nc.SetDeadline(time.Now().Add(time.Minute))
			c := textproto.NewConn(nc)
			for _, s := range []struct {
				cmd  string
				code int
			}{{"", 220}, {"HELO client.test", 250}, {"MAIL FROM:<a@example.com>", 250}, {"RCPT TO:<b@example.com>", 250}, {"DATA", 354}} {
				if s.cmd != "" {
					c.PrintfLine("%s", s.cmd)
				}
				if _, _, err := c.ReadResponse(s.code); err != nil {
					t.Fatalf("%q: %v", s.cmd, err)
				}
			}
			began := time.Now()
			line := strings.Repeat("x", 78) + "\r\n"
			if _, err := nc.Write([]byte(strings.Repeat(line, 4<<20/len(line)) + ".\r\n")); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(began); took < delay {
				t.Errorf("the message was written in %v, before -H's %v had passed", took, delay)
			}
			if _, _, err := c.ReadResponse(250); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A limit out of range is a usage error that names its flag and value,
// not a list of every flag that might be the one.
func TestLimitUsageNamesFlag(t *testing.T) {
	for _, c := range []struct{ flag, value string }{
		{"-size", "-1"}, {"-data-line", "-5"}, {"-m", "-2"}, {"-min-rate", "-3"}, {"-max-discard", "-4"},
		{"-cmd-line", "0"}, {"-max-rcpt", "-1"},
	} {
		err := Run(context.Background(), []string{c.flag, c.value, "127.0.0.1:0"}, io.Discard, io.Discard)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 {
			t.Errorf("%s %s: %v, want a usage error", c.flag, c.value, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.flag+" "+c.value+":") || strings.Contains(strings.Replace(msg, c.flag+" "+c.value, "", 1), " -") {
			t.Errorf("%s %s: %q names another flag or not this one", c.flag, c.value, msg)
		}
	}
}

// Numbers are read in decimal, as Postfix's smtp-sink reads them (atoi):
// -size 0100 is 100 bytes (flag.Int took it for octal, 64), and 0x40 is
// a usage error naming its flag.
func TestDecimalFlags(t *testing.T) {
	addr, stop := run(t, "-size", "0100", "-m", "010")
	c, err := textproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.ReadResponse(220); err != nil {
		t.Fatal(err)
	}
	if err := c.PrintfLine("EHLO x"); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.ReadResponse(250); err != nil || !strings.Contains(msg, "\nSIZE 100\n") && !strings.HasSuffix(msg, "\nSIZE 100") {
		t.Errorf("EHLO: %q, %v; want SIZE 100", msg, err)
	}
	c.Close()
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a sink that takes 0x40 stops at once
	for _, f := range []string{"-size", "-M", "-n"} {
		err = Run(ctx, []string{f, "0x40", "127.0.0.1:0"}, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 {
			t.Errorf("%s 0x40: %v (status %d), want a usage error", f, err, status)
		}
	}
	// -M 010 stops after 10 messages, not 8 (the ninth was refused).
	addr, summary := runUntilDone(t, "-addr", "127.0.0.1:0", "-M", "010")
	for range 10 {
		send(t, addr, "x\r\n")
	}
	if rest := summary(); !strings.Contains(rest, "messages 10,") {
		t.Errorf("-M 010: summary %q", rest)
	}
}
