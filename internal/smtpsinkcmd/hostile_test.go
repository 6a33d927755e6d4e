package smtpsinkcmd

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// rawConn is a client that writes bytes as given and reads replies.
type rawConn struct {
	t *testing.T
	c *net.TCPConn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// reply reads one reply, all its lines, and returns its last line ("" at
// the end of the stream).
func (r *rawConn) reply() string {
	for {
		l, err := r.r.ReadString('\n')
		if err != nil {
			return ""
		}
		if len(l) < 4 || l[3] != '-' {
			return strings.TrimRight(l, "\r\n")
		}
	}
}

// codes reads n replies and returns their codes.
func (r *rawConn) codes(n int) string {
	r.t.Helper()
	var cs []string
	for range n {
		l := r.reply()
		if len(l) < 3 {
			r.t.Fatalf("after %v: the stream ended", cs)
		}
		cs = append(cs, l[:3])
	}
	return strings.Join(cs, " ")
}

// Issue 18's bar for hostile clients, through the command with
// -t 5s -r . -W CONNECT:3s: chunk bytes never run as commands, a client's
// "." and "CONNECT x" are unknown commands answered at once (before a
// greeting that waits, 10 s there), a client dripping a byte a second is ended
// with 421, and a BDAT LAST cut off before its CRLF, by a close or a
// reset, accepts no message.
func TestHostileClients(t *testing.T) {
	for _, engine := range []string{"goroutine", "loops"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			hostileClients(t, "-engine", engine)
		})
	}
}

func hostileClients(t *testing.T, engine ...string) {
	bar := append([]string{"-t", "5s", "-r", ".", "-W", "CONNECT:3s", "-digest", "md5"}, engine...)
	t.Run("chunk bytes are not commands", func(t *testing.T) {
		t.Parallel()
		addr, stop := run(t, bar...)
		c := dialRaw(t, addr)
		c.reply()
		chunk := "RSET\r\nMAIL FROM:<x@y>\r\nRCPT TO:<x@y>\r\nQUIT\r\n"
		c.send("EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n")
		if got := c.codes(3); got != "250 250 250" {
			t.Fatalf("got %s", got)
		}
		for _, line := range []string{fmt.Sprintf("BDAT %d LAST ", len(chunk)), fmt.Sprintf("BDAT  %d", len(chunk))} {
			c.send(line + "\r\n" + chunk + "NOOP\r\n")
			if got := c.codes(2); got != "501 250" {
				t.Fatalf("%q: got %s, want 501 250", line, got)
			}
		}
		// A well-formed message: -r . refuses it with 450.
		c.send(fmt.Sprintf("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nBDAT %d LAST\r\n%sQUIT\r\n", len(chunk), chunk))
		if got := c.codes(4); got != "250 250 450 221" {
			t.Fatalf("got %s", got)
		}
		out, err := stop()
		if err != nil || !strings.HasPrefix(out, "sessions 1 (aborted 0), messages 0,") {
			t.Errorf("%v: %s", err, out)
		}
	})
	t.Run("pseudo keys are not commands", func(t *testing.T) {
		t.Parallel()
		// Greetings wait 10 s here, so that B's replies come before A's
		// with a wide margin (B waits for its own first).
		addr, stop := run(t, append([]string{"-t", "30s", "-W", "CONNECT:10s"}, engine...)...)
		b := dialRaw(t, addr)
		if l := b.reply(); !strings.HasPrefix(l, "220 ") {
			t.Fatalf("greeting %q", l)
		}
		b.send("EHLO c\r\n")
		b.codes(1)
		// A's greeting comes 10 s after it connects: B's replies, which
		// wait for nothing, come first.
		a := dialRaw(t, addr)
		greeted := make(chan string, 1)
		go func() { greeted <- a.reply() }()
		b.send(".\r\nCONNECT x\r\nconnect\r\nNOOP\r\n")
		if got := b.codes(4); got != "500 500 500 250" {
			t.Fatalf("got %s", got)
		}
		select {
		case g := <-greeted:
			t.Errorf("the other session's delayed greeting %q came first", g)
		default:
		}
		if g := <-greeted; !strings.HasPrefix(g, "220 ") {
			t.Errorf("greeting %q", g)
		}
		stop()
	})
	for _, before := range []string{"", "EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n"} {
		t.Run(fmt.Sprintf("drip after %q", before), func(t *testing.T) {
			t.Parallel()
			addr, stop := run(t, bar...)
			c := dialRaw(t, addr)
			c.reply()
			if before != "" {
				c.send(before)
				if got := c.codes(4); got != "250 250 250 354" {
					t.Fatalf("got %s", got)
				}
			}
			ended := make(chan string, 1)
			go func() { ended <- c.reply() }()
			sent := 0
			for l := ""; l == ""; {
				c.c.Write([]byte("x"))
				sent++
				select {
				case l = <-ended:
					if !strings.HasPrefix(l, "421 4.4.2 ") {
						t.Errorf("after %d bytes: %q, want 421", sent, l)
					}
				case <-time.After(time.Second):
				}
				if sent > 60 {
					t.Fatalf("still connected after %d bytes a second apart", sent)
				}
			}
			t.Logf("ended with 421 after %d bytes a second apart", sent)
			if out, err := stop(); err != nil || !strings.HasPrefix(out, "sessions 1 (aborted 1), messages 0,") || !strings.Contains(out, "421: 1") {
				t.Errorf("%v: %s", err, out)
			}
		})
	}
	// Without -r . too, where a whole BDAT LAST would be accepted.
	for _, flags := range [][]string{bar, append([]string{"-t", "5s", "-W", "CONNECT:3s", "-digest", "md5"}, engine...)} {
		for _, reset := range []bool{false, true} {
			t.Run(fmt.Sprintf("cut-off BDAT LAST %v reset %v", flags, reset), func(t *testing.T) {
				t.Parallel()
				addr, stderr, stop := startErr(t, append(slices.Clip(flags), "-c")...)
				c := dialRaw(t, addr)
				c.reply()
				c.send("EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nBDAT 3\r\nabc")
				if got := c.codes(4); got != "250 250 250 250" {
					t.Fatalf("got %s", got)
				}
				c.send("BDAT 0 LAST")
				if reset {
					c.c.SetLinger(0)
					c.c.Close()
				} else {
					c.c.CloseWrite()
					if l := c.reply(); l != "" {
						t.Errorf("reply %q to a cut-off command", l)
					}
				}
				stderr.waitFor("sess=1 ") // -c: the session has ended
				out, _, err := stop()
				if err != nil || !strings.HasPrefix(out, "sessions 1 (aborted 1), messages 0,") {
					t.Errorf("%v: %s", err, out)
				}
			})
		}
	}
}
