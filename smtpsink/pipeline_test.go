package smtpsink

import (
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
)

// The groups of a pipelined session (RFC 2920 §3.1: a group ends at DATA
// or with the message's end) and the replies to each.
var pipelineGroups = []struct{ send, reply string }{
	{"EHLO c\r\n", ""}, // its reply is checked by length only
	{"MAIL FROM:<a@b>\r\nRCPT TO:<x@y>\r\nRCPT TO:<z@y>\r\nFROB\r\nDATA\r\n",
		"250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n250 2.1.5 Ok\r\n500 5.5.2 Error: command not recognized\r\n354 End data with <CR><LF>.<CR><LF>\r\n"},
	{"Subject: s\r\n\r\nbody\r\n.\r\nMAIL FROM:<a@b>\r\nRCPT TO:<x@y>\r\nDATA\r\n",
		"250 2.0.0 Ok: queued as 1-1\r\n250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n"},
	{"..\r\n.\r\nMAIL FROM:<a@b>\r\nRCPT TO:<x@y>\r\nBDAT 5\r\nhelloBDAT 4 LAST\r\n..\r\nRSET\r\nQUIT\r\n",
		"250 2.0.0 Ok: queued as 1-2\r\n250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n250 2.0.0 5 octets received\r\n250 2.0.0 Ok: queued as 1-3\r\n250 2.0.0 Ok\r\n221 2.0.0 Bye\r\n"},
}

// A pipelined group that arrives in one read is answered in one write.
func TestPipelineOneWrite(t *testing.T) {
	cli, br, wl := pipeSession(t, Config{}, hooks{})
	ehlo := string(ehloReply(&Config{Hostname: "smtp-sink"}, false))
	for i, g := range pipelineGroups {
		want := g.reply
		if i == 0 {
			want = ehlo
		}
		before := len(wl.log())
		if _, err := cli.Write([]byte(g.send)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(br, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("group %d: got %q, want %q", i, got, want)
		}
		if w := wl.log()[before:]; len(w) != 1 {
			t.Errorf("group %d: the replies took %d writes: %q", i, len(w), w)
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after QUIT: %v, want EOF", err)
	}
}

// The same session written byte by byte, and in random pieces across
// group boundaries, read through buffers of 16 bytes and more, gets the
// same replies; the sink writes only before a read or at the end of a
// group (here EHLO, DATA twice and QUIT).
func TestPipelineSplits(t *testing.T) {
	var all, want strings.Builder
	for i, g := range pipelineGroups {
		all.WriteString(g.send)
		if i == 0 {
			want.Write(ehloReply(&Config{Hostname: "smtp-sink"}, false))
		}
		want.WriteString(g.reply)
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the same pieces on every run
	splits := []struct {
		name  string
		split func(n int) int
	}{
		{"bytes", func(int) int { return 1 }},
		{"random", func(n int) int { return 1 + rng.IntN(min(n, 40)) }},
		{"halves", func(n int) int { return (n + 1) / 2 }},
		{"whole", func(n int) int { return n }},
		{"random2", func(n int) int { return 1 + rng.IntN(n) }},
	}
	for _, sp := range splits {
		split := sp.split
		for _, bufSize := range []int{16, 4096} {
			t.Run(sp.name+"/"+strconv.Itoa(bufSize), func(t *testing.T) {
				cli, br, wl := pipeSession(t, Config{}, hooks{readBuf: bufSize})
				pieces := 0
				errc := make(chan error, 1)
				go func() {
					b := []byte(all.String())
					for len(b) > 0 {
						n := split(len(b))
						if _, err := cli.Write(b[:n]); err != nil {
							errc <- err
							return
						}
						b = b[n:]
						pieces++
					}
					errc <- nil
				}()
				got, err := io.ReadAll(br)
				if err != nil {
					t.Fatal(err)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				if string(got) != want.String() {
					t.Fatalf("got %q\nwant %q", got, want.String())
				}
				reads, writes := wl.counts()
				if writes-1 > reads+4 { // the greeting not counted
					t.Errorf("%d writes for %d reads (%d pieces)", writes-1, reads, pieces)
				}
			})
		}
	}
}

// On TCP too, the replies to a group never take more writes than the
// reads that brought it (which loopback usually makes one).
func TestPipelineTCP(t *testing.T) {
	var wl *writeLog
	seen := make(chan *writeLog, 1)
	// The goroutine engine's writes; the loops engine sends what one
	// call wrote in one write(2) by construction (netio's tests).
	s := startSink(t, Config{Engine: EngineGoroutine}, hooks{wrap: func(c net.Conn) net.Conn {
		w := &writeLog{Conn: c}
		seen <- w
		return w
	}})
	c := dial(t, s)
	wl = <-seen
	c.cmd(250, "EHLO c")
	before := len(wl.log())
	c.send("MAIL FROM:<a@b>\r\nRCPT TO:<x@y>\r\nRCPT TO:<z@y>\r\nDATA\r\n")
	if got := c.codes(4); got != "250 250 250 354" {
		t.Fatalf("got %s", got)
	}
	c.send("x\r\n.\r\nQUIT\r\n")
	if got := c.codes(2); got != "250 221" {
		t.Fatalf("got %s", got)
	}
	if n := len(wl.log()) - before; n > 4 {
		t.Errorf("%d writes for 2 groups", n)
	}
}
