package smtpsink

import (
	"crypto/sha1"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
)

// A message sent in chunks of sizes around the read buffer's (0, 1, and
// either side of 16, 4096 and 64 KiB), pipelined or one chunk at a time,
// arrives whole and unchanged: BDAT data is not dot-unstuffed.
func TestBDATChunkSizes(t *testing.T) {
	sizes := []int{0, 1, 2, 15, 16, 17, 4095, 4096, 4097, 65535, 65536, 65537, 3, 0}
	var data strings.Builder
	for i := 0; data.Len() < 300000; i++ {
		fmt.Fprintf(&data, "..line %d\r\n", i)
	}
	all := data.String()
	for _, bufSize := range []int{16, 4096, readBufSize} {
		for _, pipelined := range []bool{false, true} {
			t.Run(fmt.Sprint(bufSize, pipelined), func(t *testing.T) {
				var got messages
				s := startSink(t, Config{Digest: digest.SHA1, OnMessage: got.add, MaxDataLineBytes: 998}, hooks{readBuf: bufSize})
				c := dial(t, s)
				c.cmd(250, "EHLO c")
				c.cmd(250, "MAIL FROM:<a@b>")
				c.cmd(250, "RCPT TO:<a@b>")
				rest, sent := all, 0
				var batch strings.Builder
				for _, n := range sizes {
					n = min(n, len(rest))
					fmt.Fprintf(&batch, "BDAT %d\r\n%s", n, rest[:n])
					rest, sent = rest[n:], sent+n
					if !pipelined {
						c.send(batch.String())
						batch.Reset()
						if msg := c.expect(250); msg != "2.0.0 "+strconv.Itoa(n)+" octets received" {
							t.Fatalf("reply %q", msg)
						}
					}
				}
				fmt.Fprintf(&batch, "BDAT %d LAST\r\n%s", len(rest), rest)
				c.send(batch.String())
				if pipelined {
					if got := c.codes(len(sizes)); got != strings.TrimSpace(strings.Repeat("250 ", len(sizes))) {
						t.Fatalf("got %s", got)
					}
				}
				c.expect(250)
				c.cmd(221, "QUIT")
				ms := got.all()
				sum := sha1.Sum([]byte(all))
				if len(ms) != 1 || ms[0].Size != int64(len(all)) || ms[0].Chunks != len(sizes)+1 || fmt.Sprintf("%x", sum) != ms[0].Digest.String() {
					t.Errorf("messages %+v, want size %d", ms, len(all))
				}
			})
		}
	}
}

// BDAT out of sequence, malformed, mixed with DATA and RSET, too large,
// with a bare LF, BINARYMIME and LMTP: each chunk is read to its end and
// the session stays in step.
func TestBDATErrors(t *testing.T) {
	var got messages
	s := startSink(t, Config{MaxSize: 20, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	for _, step := range []struct{ send, codes string }{
		{"BDAT 6\r\nNOOP\r\nNOOP\r\n", "503 250"}, // the chunk "NOOP\r\n" is discarded
		{"BDAT 1 2\r\nxBDAT 1 LAST LAST\r\nx", "501 501"},
		{"MAIL FROM:<a@b>\r\nBDAT 3 LAST\r\nabc", "250 554"},
		{"RCPT TO:<a@b>\r\nBDAT 2\r\nabDATA\r\nRCPT TO:<c@d>\r\nBDAT 1 last\r\nc", "250 250 503 503 250"},
		{"MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nBDAT 2\r\nabRSET\r\nBDAT 1 LAST\r\nx", "250 250 250 250 503"},
		// Too large: the chunk that passes the limit and the LAST one get 552.
		{"MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nBDAT 15\r\n0123456789abcdeBDAT 10\r\n0123456789BDAT 1 LAST\r\nx", "250 250 250 552 552"},
		// A bare LF under BareReject; not in BINARYMIME, where DATA is refused.
		{"MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nBDAT 5 LAST\r\na\nb\r\n", "250 250 550"},
		{"MAIL FROM:<a@b> BODY=BINARYMIME\r\nRCPT TO:<a@b>\r\nDATA\r\n", "250 250 503"},
		{"BDAT 6 LAST\r\na\nb\x00\r\r", "250"},
		// DATA, then BDAT, in one session.
		{"MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nDATA\r\n", "250 250 354"},
		{"..d\r\n.\r\nMAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nBDAT 0 LAST\r\nQUIT\r\n", "250 250 250 250 221"},
	} {
		c.send(step.send)
		if got := c.codes(strings.Count(step.codes, " ") + 1); got != step.codes {
			t.Fatalf("%q: got %s, want %s", step.send, got, step.codes)
		}
	}
	var sizes []string
	for _, m := range got.all() {
		sizes = append(sizes, fmt.Sprintf("%d/%d/%s", m.Size, m.Chunks, m.Body))
	}
	if got := strings.Join(sizes, " "); got != "3/2/ 6/1/BINARYMIME 4/0/ 0/1/" {
		t.Errorf("messages (size/chunks/body): %s", got)
	}
}

// LMTP answers BDAT LAST once per recipient; the other chunks once.
func TestBDATLMTP(t *testing.T) {
	c := dial(t, startSink(t, Config{LMTP: true}, hooks{}))
	c.cmd(250, "LHLO c")
	c.send("MAIL FROM:<a@b>\r\nRCPT TO:<1@b>\r\nRCPT TO:<2@b>\r\nBDAT 1\r\nxBDAT 1 LAST\r\ny")
	if got := c.codes(6); got != "250 250 250 250 250 250" {
		t.Fatalf("got %s", got)
	}
	c.cmd(221, "QUIT")
}

// With CHUNKING off, BDAT is not a command.
func TestBDATOff(t *testing.T) {
	c := dial(t, startSink(t, Config{NoChunking: true}, hooks{}))
	c.cmd(250, "EHLO c")
	c.cmd(501, "MAIL FROM:<a@b> BODY=BINARYMIME")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(500, "BDAT 0 LAST")
}

// A BDAT command line that is not right but has a size (an extra space,
// a word after the size) gets 501 once its chunk has been read, and ends
// the transaction; the chunk's bytes, here commands, are never taken for
// commands. One whose size cannot be read ends the session with 421.
func TestBDATMalformed(t *testing.T) {
	chunk := "RSET\r\nMAIL FROM:<x@y>\r\nRCPT TO:<x@y>\r\nQUIT\r\n"
	for _, cfg := range []Config{{}, {NoChunking: true}} {
		for _, line := range []string{"BDAT %d LAST ", "BDAT  %d", "BDAT %d  LAST", "BDAT %d LAST LAST", "BDAT %d FIRST", "BDAT\t%d", "bdat %d\t"} {
			line = fmt.Sprintf(line, len(chunk))
			t.Run(fmt.Sprintf("%q chunking %v", line, !cfg.NoChunking), func(t *testing.T) {
				var got messages
				cfg.OnMessage = got.add
				s := startSink(t, cfg, hooks{})
				c := dial(t, s)
				c.cmd(250, "EHLO c")
				c.send("MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nBDAT 2\r\nok" + line + "\r\n" + chunk + "BDAT 1 LAST\r\nzNOOP\r\n")
				want := "250 250 250 501 503 250"
				if cfg.NoChunking {
					want = "250 250 500 500 500 250"
				}
				if got := c.codes(6); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
				c.cmd(221, "QUIT")
				if ms := got.all(); len(ms) != 0 {
					t.Errorf("messages %+v", ms)
				}
			})
		}
	}
	for _, line := range []string{"BDAT", "BDAT x", "BDAT -1", "BDAT LAST 5", "BDAT 99999999999999999999", "BDAT +5"} {
		t.Run(fmt.Sprintf("%q", line), func(t *testing.T) {
			s := startSink(t, Config{}, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			c.send("MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\n" + line + "\r\n" + chunk)
			if got := c.codes(3); got != "250 250 421" {
				t.Fatalf("got %s", got)
			}
			if _, err := c.R.ReadByte(); err != io.EOF {
				t.Errorf("after the 421: %v, want EOF", err)
			}
			s.Close()
			if st := s.Stats(); st.Aborted != 1 || st.Messages != 0 || st.Errors[421] != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// As go-smtp's users found (emersion/go-smtp #315, #309): a BDAT chunk
// pipelined after a refused MAIL or RCPT is read and thrown away, its
// bytes never commands; and LMTP's replies stay in step after an
// oversized body, DATA's or BDAT's (one reply per refused non-LAST chunk,
// one per recipient after LAST), so the next transaction is served.
func TestBDATAfterRefusals(t *testing.T) {
	chunk := "RSET\r\nQUIT\r\n"
	t.Run("refused MAIL", func(t *testing.T) {
		c := dial(t, startSink(t, Config{MaxSize: 100}, hooks{}))
		c.cmd(250, "EHLO c")
		c.send("MAIL FROM:<a@b> SIZE=1000\r\nRCPT TO:<c@d>\r\nBDAT 12 LAST\r\n" + chunk + "NOOP\r\n")
		if got := c.codes(4); got != "552 503 503 250" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("refused RCPT", func(t *testing.T) {
		for _, lmtp := range []bool{false, true} {
			c := dial(t, startSink(t, Config{LMTP: lmtp, Force: map[string]Reply{"RCPT": {Code: 550}}}, hooks{}))
			hello, noRcpt := "EHLO c", "554"
			if lmtp {
				hello, noRcpt = "LHLO c", "503"
			}
			c.cmd(250, hello)
			c.send("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nBDAT 12\r\n" + chunk + "BDAT 12 LAST\r\n" + chunk + "NOOP\r\n")
			if got, want := c.codes(5), "250 550 "+noRcpt+" "+noRcpt+" 250"; got != want {
				t.Fatalf("LMTP %v: got %s, want %s", lmtp, got, want)
			}
		}
	})
	t.Run("LMTP oversized", func(t *testing.T) {
		var got messages
		c := dial(t, startSink(t, Config{LMTP: true, MaxSize: 1000, OnMessage: got.add}, hooks{}))
		c.cmd(250, "LHLO c")
		rcpts := "MAIL FROM:<a@b>\r\nRCPT TO:<1@b>\r\nRCPT TO:<2@b>\r\nRCPT TO:<3@b>\r\n"
		big := strings.Repeat("x", 1022) + "\r\n"
		// BDAT, as the smtp-source -L -chunking -pipelining
		// -chunk-size 1024 -l 3000 -r 3 sends it.
		c.send(rcpts + "BDAT 1024\r\n" + big + "BDAT 1024\r\n" + big + "BDAT 952 LAST\r\n" + big[:950] + "\r\nRSET\r\n")
		if got := c.codes(4 + 2 + 3 + 1); got != "250 250 250 250 552 552 552 552 552 250" {
			t.Fatalf("BDAT: got %s", got)
		}
		c.send(rcpts + "DATA\r\n")
		if got := c.codes(5); got != "250 250 250 250 354" {
			t.Fatalf("got %s", got)
		}
		c.send(big + big + ".\r\nRSET\r\n")
		if got := c.codes(4); got != "552 552 552 250" {
			t.Fatalf("DATA: got %s", got)
		}
		c.send(rcpts + "BDAT 2 LAST\r\nokQUIT\r\n")
		if got := c.codes(8); got != "250 250 250 250 250 250 250 221" {
			t.Fatalf("after: got %s", got)
		}
		if ms := got.all(); len(ms) != 1 || ms[0].Size != 2 {
			t.Errorf("messages %+v", ms)
		}
	})
}
