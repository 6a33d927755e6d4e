package smtpsink

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
)

// BenchmarkSession runs one SMTP session over loopback, a message per
// iteration. In mode=lockstep the client drives the sink as Postfix's
// smtp-source -d does: MAIL, RCPT and DATA each wait for their reply, and
// the message and its end line go in writes of 128 KiB with Nagle's
// algorithm on. In mode=pipelined MAIL, RCPT and DATA go in one write
// (RFC 2920) and their replies come back in one. The client does not
// allocate, so allocs/op are the sink's. Compare runs with benchstat:
//
//	go test -run XXX -bench Session -count 10 ./smtpsink | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkSession(b *testing.B) {
	for _, size := range []int{4 << 10, 1<<20 + 112} {
		for _, pipelined := range []bool{false, true} {
			mode := "lockstep"
			if pipelined {
				mode = "pipelined"
			}
			b.Run(fmt.Sprintf("size=%dKiB/mode=%s", size>>10, mode), func(b *testing.B) {
				benchSession(b, Config{}, size, pipelined)
			})
		}
	}
	b.Run("size=4KiB/mode=lockstep/digest=sha256", func(b *testing.B) {
		benchSession(b, Config{Digest: digest.SHA256}, 4<<10, false)
	})
}

func benchSession(b *testing.B, cfg Config, size int, pipelined bool) {
	s := startSink(b, cfg, hooks{})
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetNoDelay(false)
	br := bufio.NewReader(c)
	expect := func(code string) {
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if !bytes.HasPrefix(line, []byte(code)) {
				b.Fatalf("got %q, want %s", line, code)
			}
			if len(line) < 4 || line[3] != '-' {
				return
			}
		}
	}
	send := func(p []byte) {
		if _, err := c.Write(p); err != nil {
			b.Fatal(err)
		}
	}
	expect("220")
	send([]byte("EHLO bench\r\n"))
	expect("250")
	mail, rcpt, data := []byte("MAIL FROM:<a@example.com>\r\n"), []byte("RCPT TO:<b@example.com>\r\n"), []byte("DATA\r\n")
	msg := append(benchMessage(size), ".\r\n"...)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	group := append(append(append([]byte(nil), mail...), rcpt...), data...)
	for range b.N {
		if pipelined {
			send(group)
			expect("250")
			expect("250")
		} else {
			send(mail)
			expect("250")
			send(rcpt)
			expect("250")
			send(data)
		}
		expect("354")
		for p := msg; len(p) > 0; {
			n := min(len(p), 128<<10)
			send(p[:n])
			p = p[n:]
		}
		expect("250")
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	send([]byte("QUIT\r\n"))
	expect("221")
	if st := s.Stats(); st.Messages != uint64(b.N) || st.Bytes != uint64(b.N)*uint64(size) {
		b.Fatalf("stats %+v for %d messages of %d bytes", st, b.N, size)
	}
}

// benchMessage is size bytes of mail text: a few headers and lines of 76
// characters, as smtp-source sends.
func benchMessage(size int) []byte {
	var m bytes.Buffer
	m.WriteString("From: <a@example.com>\r\nTo: <b@example.com>\r\nSubject: bench\r\n\r\n")
	line := strings.Repeat("x", 76) + "\r\n"
	for m.Len()+len(line)+2 <= size {
		m.WriteString(line)
	}
	m.WriteString(strings.Repeat("y", size-m.Len()-2) + "\r\n")
	return m.Bytes()
}
