package smtpsource

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// groupServer answers a pipelined group of MAIL, RCPT and BDAT with
// MAIL's and RCPT's 250 and, at the chunk's first byte, a 552 for it;
// then it reads no more, or, with reset, resets the connection.
func groupServer(t *testing.T, reset bool) string {
	done := make(chan struct{})
	addr := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		say := func(s string) bool { _, err := c.Write([]byte(s)); return err == nil }
		if !say("220 group ESMTP\r\n") {
			return
		}
		var replies string
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			switch verb := strings.ToUpper(strings.Fields(l + " x")[0]); verb {
			case "EHLO":
				say("250-group\r\n250-PIPELINING\r\n250 CHUNKING\r\n")
			case "MAIL", "RCPT":
				replies += "250 2.0.0 Ok\r\n"
			case "BDAT":
				br.ReadByte()
				if !say(replies+"552 5.3.4 message too big\r\n") || reset {
					c.(*net.TCPConn).SetLinger(0)
					return
				}
				<-done // read no more
				return
			default:
				say("221 2.0.0 Bye\r\n")
				return
			}
		}
	})
	t.Cleanup(func() { close(done) })
	return addr
}

// A server that takes a pipelined group's MAIL and RCPT and refuses its
// BDAT chunk at once (552 "message too big"), then stops reading or
// resets the connection: the message fails with that refusal, counted
// once as the end of data's reply, and MAIL's and RCPT's replies as
// theirs. Before, the first reply that had come, MAIL's 250, was taken
// as the only one, and the message failed with the write's timeout or
// reset, an I/O error.
func TestPipelinedChunkRefused(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			t.Parallel()
			cfg := base(groupServer(t, reset))
			cfg.Pipelining, cfg.Chunking, cfg.ChunkSize = true, true, 4<<20
			large := append([]byte("Subject: x\n\n"), bytes.Repeat([]byte(strings.Repeat("x", 76)+"\n"), 16<<10)...)
			// The write waits out the whole Timeout when the server stops
			// reading; one long enough for the refusal to have come.
			cfg.MessageSet, cfg.Messages, cfg.Timeout, cfg.WindowSize = [][]byte{large}, 1, 2*time.Second, 16<<10
			res := runOK(t, cfg)
			if res.Delivered != 0 || res.Failed != 1 || res.Errors != 1 || res.Rejections != 1 || res.IOErrors != 0 ||
				res.Replies["mail"][250] != 1 || res.Replies["rcpt"][250] != 1 || res.Replies["dot"][552] != 1 ||
				!strings.HasPrefix(res.FirstError, "dot: 552 ") {
				t.Fatalf("delivered %d, failed %d, errors %d (rejections %d, I/O %d), replies %v, first %q; want the 552 the one error",
					res.Delivered, res.Failed, res.Errors, res.Rejections, res.IOErrors, res.Replies, res.FirstError)
			}
		})
	}
}
