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
// iteration, as Postfix's smtp-source -d drives a sink: MAIL, RCPT and
// DATA each wait for their reply, the data goes in writes of 128 KiB with
// Nagle's algorithm on and ".\r\n" as a write of its own. The client does
// not allocate, so allocs/op are the sink's. Compare runs with benchstat:
//
//	go test -run XXX -bench Session -count 10 ./smtpsink | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkSession(b *testing.B) {
	for _, size := range []int{4 << 10, 1<<20 + 112} {
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			benchSession(b, Config{}, size)
		})
	}
	b.Run("size=4KiB/digest=sha256", func(b *testing.B) {
		benchSession(b, Config{Digest: digest.SHA256}, 4<<10)
	})
}

func benchSession(b *testing.B, cfg Config, size int) {
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
	for range b.N {
		send(mail)
		expect("250")
		send(rcpt)
		expect("250")
		send(data)
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
