package smtpsink

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"runtime"
	"slices"
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
	send, quit := dialSession(b, s, size, pipelined)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	send(b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	quit()
	if st := s.Stats(); st.Messages != uint64(b.N) || st.Bytes != uint64(b.N)*uint64(size) {
		b.Fatalf("stats %+v for %d messages of %d bytes", st, b.N, size)
	}
}

// dialSession opens a session with s, as BenchmarkSession's client, and
// says EHLO. send(n) sends n messages of size bytes, lockstep or
// pipelined, with no allocation of its own; quit ends the session.
func dialSession(tb testing.TB, s *Server, size int, pipelined bool) (send func(n int), quit func()) {
	tb.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	c.(*net.TCPConn).SetNoDelay(false)
	br := bufio.NewReader(c)
	expect := func(code string) {
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				tb.Fatal(err)
			}
			if !bytes.HasPrefix(line, []byte(code)) {
				tb.Fatalf("got %q, want %s", line, code)
			}
			if len(line) < 4 || line[3] != '-' {
				return
			}
		}
	}
	write := func(p []byte) {
		if _, err := c.Write(p); err != nil {
			tb.Fatal(err)
		}
	}
	expect("220")
	write([]byte("EHLO bench\r\n"))
	expect("250")
	mail, rcpt, data := []byte("MAIL FROM:<a@example.com>\r\n"), []byte("RCPT TO:<b@example.com>\r\n"), []byte("DATA\r\n")
	msg := append(benchMessage(size), ".\r\n"...)
	group := append(append(append([]byte(nil), mail...), rcpt...), data...)
	send = func(n int) {
		for range n {
			if pipelined {
				write(group)
				expect("250")
				expect("250")
			} else {
				write(mail)
				expect("250")
				write(rcpt)
				expect("250")
				write(data)
			}
			expect("354")
			for p := msg; len(p) > 0; {
				k := min(len(p), 128<<10)
				write(p[:k])
				p = p[k:]
			}
			expect("250")
		}
	}
	quit = func() {
		write([]byte("QUIT\r\n"))
		expect("221")
	}
	return send, quit
}

// TestSessionAllocs counts the allocations of a session's messages in
// steady state, on both engines: none a message on EngineLoops, and on
// EngineGoroutine one. Each command line was made a string, 3 a message
// (MAIL, RCPT, DATA); the lines a client repeats are now the strings
// kept for them (lineString). A closure made for every command had
// doubled them.
func TestSessionAllocs(t *testing.T) {
	for _, tc := range []struct {
		engine Engine
		max    float64
	}{{EngineLoops, 0}, {EngineGoroutine, 1}} {
		t.Run(string(tc.engine), func(t *testing.T) {
			s := startSink(t, Config{Engine: tc.engine}, hooks{})
			send, quit := dialSession(t, s, 4<<10, false)
			defer quit()
			send(50)
			const n = 400
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			send(n)
			runtime.ReadMemStats(&after)
			// Half an allocation of slack: the count is the process's.
			if per := float64(after.Mallocs-before.Mallocs) / n; per > tc.max+0.5 {
				t.Errorf("%.2f allocations a message, want at most %g", per, tc.max)
			}
		})
	}
}

// lineString makes a string of a line once: the same line again, among
// the session's last four, is that string, with no allocation. A line
// longer than recentLineMax is not kept, and a kept line is not changed
// by the bytes it was made from.
func TestLineString(t *testing.T) {
	var ss session
	buf := []byte("MAIL FROM:<a@example.com>")
	lines := [][]byte{buf, []byte("RCPT TO:<b@example.com>"), []byte("DATA"), []byte("QUIT")}
	for _, l := range lines {
		ss.lineString(l)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, l := range lines {
			if got := ss.lineString(l); got != string(l) {
				t.Fatalf("%q: got %q", l, got)
			}
		}
	}); n != 0 {
		t.Errorf("%v allocations for lines seen before, want 0", n)
	}
	kept := ss.lineString(buf)
	buf[0] = 'X'
	if kept != "MAIL FROM:<a@example.com>" || ss.lineString(buf) != "XAIL FROM:<a@example.com>" {
		t.Errorf("kept %q, then %q", kept, ss.lineString(buf))
	}
	long := bytes.Repeat([]byte("x"), recentLineMax+1)
	ss.lineString(long)
	if n := testing.AllocsPerRun(10, func() { ss.lineString(long) }); n != 1 || slices.Contains(ss.recent[:], string(long)) {
		t.Errorf("a long line: %v allocations, kept in %q", n, ss.recent)
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
