package smtpsource

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// postfixSink is a running Postfix smtp-sink.
type postfixSink struct {
	addr string
	dump string // its -D dump file, if asked
	out  *tooltest.Buffer
}

func smtpSinkPath(t *testing.T) string {
	if _, err := exec.LookPath("smtp-sink"); err == nil {
		return tooltest.Path(t, "smtp-sink")
	}
	return tooltest.Path(t, "/usr/sbin/smtp-sink") // Debian keeps it out of a user's PATH
}

// startSink runs Postfix's smtp-sink with -c (its counters on stdout),
// args, and, with dump, -D (every message appended to a file), on a free
// loopback port until the test ends. It returns once the sink has sent
// its greeting to a connection.
func startSink(t *testing.T, dump bool, args ...string) *postfixSink {
	t.Helper()
	path := smtpSinkPath(t)
	s := &postfixSink{}
	if dump {
		dir := t.TempDir()
		// smtp-sink drops root privileges for those of -u nobody.
		os.Chmod(filepath.Dir(dir), 0o755)
		os.Chmod(dir, 0o777)
		s.dump = filepath.Join(dir, "dump")
		args = append(args, "-D", s.dump)
	}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody") // it refuses to run as root without
	}
	for try := 0; try < 5; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // the port is free; smtp-sink takes it, unless someone else did meanwhile
		s.out = &tooltest.Buffer{}
		cmd := exec.Command(path, append(append([]string{"-c"}, args...), addr, "100")...)
		cmd.Stdout, cmd.Stderr = s.out, s.out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if ready(addr, exited) {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			s.addr = addr
			return s
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("smtp-sink did not start: %s", s.out.String())
	return nil
}

// ready waits until addr greets a connection (with 220, or with -Q
// CONNECT 421), or the sink exits.
func ready(addr string, exited chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(5 * time.Millisecond) // not listening yet: poll again
			continue
		}
		c.SetDeadline(time.Now().Add(time.Minute))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("QUIT\r\n"))
		c.Close()
		return err == nil && (strings.HasPrefix(line, "220") || strings.HasPrefix(line, "421"))
	}
	return false
}

var counterRE = regexp.MustCompile(`sess=(\d+) quit=(\d+) mesg=(\d+)`)

// counts waits for smtp-sink's counters to show sessions sessions ended
// (the readiness check is one more) and returns its message count.
func (s *postfixSink) counts(t *testing.T, sessions int64) (sess, mesg int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := counterRE.FindAllStringSubmatch(s.out.String(), -1)
		if len(m) > 0 {
			last := m[len(m)-1]
			sess, _ = strconv.ParseInt(last[1], 10, 64)
			mesg, _ = strconv.ParseInt(last[3], 10, 64)
			if sess >= sessions+1 {
				return sess - 1, mesg
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtp-sink counters: %q", s.out.String())
		}
		time.Sleep(10 * time.Millisecond) // smtp-sink updates them as sessions end: poll
	}
}

// Against Postfix's smtp-sink, a server none of us wrote: every message is
// taken, smtp-sink counts the same sessions and messages, and nothing is
// an error; closed loop, reused connections or not, pipelined, with
// several recipients, open loop.
func TestPostfixSink(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"s4-m200-l4096-d", Config{Sessions: 4, Messages: 200, Length: 4096, Reuse: true}},
		{"s4-m40-no-reuse", Config{Sessions: 4, Messages: 40, Length: 1000}},
		{"pipelining", Config{Sessions: 4, Messages: 200, Length: 4096, Reuse: true, Pipelining: true}},
		{"r5-pipelining", Config{Sessions: 2, Messages: 50, Recipients: 5, Reuse: true, Pipelining: true}},
		{"r3", Config{Sessions: 2, Messages: 20, Recipients: 3}},
		{"chunking-not-offered", Config{Sessions: 2, Messages: 20, Reuse: true, Chunking: true, Pipelining: true}},
		{"body-mail", Config{Sessions: 2, Messages: 20, Length: 20000, Body: "mail", Reuse: true, Pipelining: true}},
		{"open-loop", Config{Sessions: 4, Messages: 100, Length: 2000, Reuse: true, QPS: 2000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := startSink(t, false)
			cfg := c.cfg
			cfg.Addr = sink.addr
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(cfg.Messages)
			rcpts := int64(max(cfg.Recipients, 1))
			if res.Delivered != n || res.Errors != 0 || res.RcptOK != n*rcpts || res.Replies["dot"][250] != n || res.Pipelining != cfg.Pipelining || res.Chunking {
				t.Fatalf("%+v", res)
			}
			wantConns := n
			if cfg.Reuse {
				wantConns = int64(cfg.Sessions)
			}
			if res.Connections != wantConns {
				t.Errorf("%d connections, want %d", res.Connections, wantConns)
			}
			sess, mesg := sink.counts(t, wantConns)
			if sess != wantConns || mesg != n {
				t.Errorf("smtp-sink counted %d sessions and %d messages, want %d and %d", sess, mesg, wantConns, n)
			}
			if cfg.QPS > 0 && (res.Lateness == nil || res.Lateness.Count != n) {
				t.Errorf("lateness %+v", res.Lateness)
			}
			if res.Phases.Message.Count != n || res.Phases.Rcpt.Count != n*rcpts || res.Phases.Data.Count != n || res.Phases.Dot.Count != n {
				t.Errorf("phases %+v %+v %+v", res.Phases.Message, res.Phases.Rcpt, res.Phases.Dot)
			}
		})
	}
}

// smtp-sink -D dumps each message as it received it, LF-ended: the
// recipients are named as smtp-source names them, and the body that
// needed dot-stuffing arrives as it was before stuffing.
func TestPostfixSinkDump(t *testing.T) {
	sink := startSink(t, true)
	cfg := Config{Addr: sink.addr, Messages: 3, Recipients: 3, Length: 5000, Body: "mail", Reuse: true, Pipelining: true,
		From: "src@example.test", To: "rcpt@example.test", Subject: "load"}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Delivered != 3 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	sink.counts(t, 1)
	dump, err := os.ReadFile(sink.dump)
	if err != nil {
		t.Fatal(err)
	}
	d := string(dump)
	body := strings.ReplaceAll(string(MakeBody("mail", 5000)), "\r\n", "\n")
	if !strings.Contains(body, "\n.") {
		t.Fatal("no line of the body starts with a dot")
	}
	if strings.Count(d, "X-Client-Addr:") != 3 || strings.Count(d, "\n\n"+body+"\n") != 3 {
		t.Errorf("dump does not hold the 3 bodies:\n%.2000s", d)
	}
	for _, want := range []string{"X-Mail-Args: <src@example.test>", "X-Rcpt-Args: <3rcpt@example.test>", "X-Rcpt-Args: <2rcpt@example.test>", "X-Rcpt-Args: <rcpt@example.test>", "Subject: load", "From: <src@example.test>"} {
		if strings.Count(d, want+"\n") != 3 {
			t.Errorf("dump: %q %d times, want 3", want, strings.Count(d, want+"\n"))
		}
	}
}

// smtp-sink -L speaks LMTP: one reply per recipient at the end of data.
func TestPostfixSinkLMTP(t *testing.T) {
	sink := startSink(t, false, "-L")
	res, err := Run(context.Background(), Config{Addr: sink.addr, LMTP: true, Sessions: 2, Messages: 30, Recipients: 3, Reuse: true, Pipelining: true})
	if err != nil || res.Delivered != 30 || res.Errors != 0 || res.Replies["lhlo"][250] != 2 || res.Replies["dot"][250] != 90 {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, mesg := sink.counts(t, 2); mesg != 30 {
		t.Errorf("smtp-sink counted %d messages", mesg)
	}
}

// smtp-sink refusing commands (-r soft, -f hard): counted by phase and
// code, and the run goes on.
func TestPostfixSinkRefusals(t *testing.T) {
	for _, c := range []struct {
		arg, cmd, phase string
		code            int
	}{
		{"-r", "RCPT", "rcpt", 450},
		{"-f", "MAIL", "mail", 500},
		{"-f", ".", "dot", 500},
	} {
		sink := startSink(t, false, c.arg, c.cmd)
		res, err := Run(context.Background(), Config{Addr: sink.addr, Sessions: 2, Messages: 10, Reuse: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Delivered != 0 || res.Failed != 10 || res.Replies[c.phase][c.code] != 10 || res.Rejections != 10 || res.IOErrors+res.ProtocolErrors+res.ConnectErrors != 0 {
			t.Errorf("%s %s: %+v", c.arg, c.cmd, res)
		}
	}
}

// smtp-sink answering a command with 421 and closing (-Q): each message
// fails with that 421, counted once, on a connection of its own, and
// nothing is an I/O error, pipelined or not (with -d and pipelining, the
// next message's envelope, sent behind the data that got the 421, goes out
// again on the next connection). A 421 greeting (-Q CONNECT) is a connect
// refusal, followed by a back-off (on the test's clock, which smtp-sink
// does not see).
func TestPostfixSink421(t *testing.T) {
	for _, c := range []struct {
		cmd, phase string
		reuse      bool
	}{
		{"MAIL", "mail", true},
		{"RCPT", "rcpt", true},
		{".", "dot", true},
		{"CONNECT", "banner", false},
	} {
		for _, pipe := range []bool{false, true} {
			sink := startSink(t, false, "-Q", c.cmd)
			cfg := Config{Addr: sink.addr, Sessions: 2, Messages: 10, Reuse: c.reuse, Pipelining: pipe}
			res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
			if err != nil {
				t.Fatal(err)
			}
			accounted(t, res)
			refused, rejected := int64(0), int64(10)
			if c.cmd == "CONNECT" {
				refused, rejected = 10, 0
			}
			// With -d each session connects before it takes a message, as
			// Postfix's smtp-source -d does: a session the other left no
			// message to (a slow start on a loaded host) quits its one
			// connection unused. Every other connection carried one
			// message and ended at its 421, with no QUIT.
			idle := res.Replies["quit"][221]
			if res.Delivered != 0 || res.Failed != 10 || res.Connections != 10+idle || res.Replies[c.phase][421] != 10 ||
				res.ConnectRefusals != refused || res.Rejections != rejected || res.Errors != 10 ||
				len(res.Replies["quit"]) > 1 || idle > 0 && (!c.reuse || idle > int64(cfg.Sessions-1)) {
				t.Errorf("-Q %s, pipelining %v: %+v", c.cmd, pipe, res)
			}
			if sess, _ := sink.counts(t, res.Connections); sess != res.Connections {
				t.Errorf("-Q %s, pipelining %v: smtp-sink counted %d sessions, want %d", c.cmd, pipe, sess, res.Connections)
			}
		}
	}
}
