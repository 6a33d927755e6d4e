package smtpsinkcmd

import (
	"bytes"
	"fmt"
	"net"
	"net/smtp"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/smtpsink"
)

// dumpLoadBody is message m of client s: a Subject line that names it,
// and enough lines that sessions are in their data when the sink stops.
func dumpLoadBody(s, m int) string {
	return fmt.Sprintf("Subject: c%d m%d\r\n\r\n", s, m) + strings.Repeat("0123456789abcdef\r\n", 2000)
}

// dumpLoad runs clients sessions at once against addr, each sending up
// to 3 messages a session and QUIT, and again, until a reply refuses a
// message or its connection fails (the sink stopped). It returns the
// names ("cS mM") of the messages whose data got 250. After acks messages
// accepted in all, it closes reached.
func dumpLoad(addr string, clients, acks int, reached chan<- struct{}) <-chan map[string]bool {
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		once  sync.Once
		wg    sync.WaitGroup
	)
	for s := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := 0; ; {
				c, err := smtp.Dial(addr)
				if err != nil {
					return
				}
				for range 3 {
					if c.Mail("a@x.test") != nil || c.Rcpt("b@y.test") != nil {
						c.Close()
						return
					}
					w, err := c.Data()
					if err != nil {
						c.Close()
						return
					}
					w.Write([]byte(dumpLoadBody(s, m)))
					if w.Close() != nil {
						c.Close()
						return
					}
					mu.Lock()
					acked[fmt.Sprintf("c%d m%d", s, m)] = true
					if len(acked) == acks {
						once.Do(func() { close(reached) })
					}
					mu.Unlock()
					m++
				}
				if c.Quit() != nil {
					c.Close()
					return
				}
			}
		}()
	}
	done := make(chan map[string]bool, 1)
	go func() {
		wg.Wait()
		done <- acked
	}()
	return done
}

var summaryMessages = regexp.MustCompile(`messages (\d+)[ ,]`)

// checkLoadDumps checks the dumps in dir (-d: a file each; -D: the file
// all) against the messages acked and the summary's count: each a whole
// record of its transaction and message, one for each message that got
// 250 and for no other, and no temporary file left.
func checkLoadDumps(t *testing.T, flag, dir string, acked map[string]bool, summary string) {
	t.Helper()
	m := summaryMessages.FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("summary %q", summary)
	}
	n, _ := strconv.Atoi(m[1])
	if n != len(acked) {
		t.Errorf("summary: %d messages, the clients saw %d accepted", n, len(acked))
	}
	// records parses b as whole dump records, back to back.
	records := func(name string, b []byte) (names []string) {
		for len(b) > 0 {
			h := dumpRecord.FindIndex(b)
			if h == nil || h[0] != 0 {
				t.Errorf("%s: not a dump record at %.80q", name, b)
				return names
			}
			b = b[h[1]:]
			s := regexp.MustCompile(`\ASubject: c(\d+) m(\d+)\r\n`).FindSubmatch(b)
			if s == nil {
				t.Errorf("%s: not a message of the load at %.80q", name, b)
				return names
			}
			c, _ := strconv.Atoi(string(s[1]))
			mm, _ := strconv.Atoi(string(s[2]))
			want := dumpLoadBody(c, mm) + "\r\n"
			if !bytes.HasPrefix(b, []byte(want)) {
				t.Errorf("%s: c%d m%d is not whole", name, c, mm)
				return names
			}
			names = append(names, fmt.Sprintf("c%d m%d", c, mm))
			b = b[len(want):]
		}
		return names
	}
	var dumped []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		r := records(e.Name(), b)
		if flag == "-d" && len(r) != 1 {
			t.Errorf("%s: %d records, want 1", e.Name(), len(r))
		}
		dumped = append(dumped, r...)
	}
	seen := map[string]bool{}
	for _, d := range dumped {
		if seen[d] {
			t.Errorf("%s dumped twice", d)
		}
		seen[d] = true
		if !acked[d] {
			t.Errorf("%s dumped, but its client did not see it accepted", d)
		}
	}
	for a := range acked {
		if !seen[a] {
			t.Errorf("%s accepted, but not dumped", a)
		}
	}
	if len(dumped) != n {
		t.Errorf("%d dumps, summary: %d messages", len(dumped), n)
	}
}

// The sink stopped while many sessions dump at once, by SIGINT or
// SIGTERM (which cancel Run's context: see interruptible in
// cmd/wirespeed), by -M or by -n, leaves a dump for each message whose
// client saw 250 and for no other (none for a message cut short or
// refused with 421), each whole (-D's records back to back, never
// interleaved), no temporary file, and the summary counts them.
func TestRunDumpStopUnderLoad(t *testing.T) {
	engine := []string{}
	if e := os.Getenv("SMTPSINK_TEST_ENGINE"); e != "" {
		engine = []string{"-engine", e}
	}
	for _, flag := range []string{"-d", "-D"} {
		target := func(dir string) string {
			if flag == "-d" {
				return dir + "/"
			}
			return filepath.Join(dir, "all")
		}
		t.Run("signal"+flag, func(t *testing.T) {
			dir := t.TempDir()
			addr, stop := run(t, "-h", "dump.test", flag, target(dir))
			reached := make(chan struct{})
			done := dumpLoad(addr, 8, 30, reached)
			<-reached
			summary, err := stop()
			if err != nil {
				t.Fatal(err)
			}
			checkLoadDumps(t, flag, dir, <-done, summary)
		})
		t.Run("M"+flag, func(t *testing.T) {
			dir := t.TempDir()
			addr, summary := runUntilDone(t, append(engine, "-addr", "127.0.0.1:0", "-M", "20", "-h", "dump.test", flag, target(dir))...)
			acked := <-dumpLoad(addr, 8, -1, nil)
			out := summary()
			if len(acked) != 20 {
				t.Errorf("%d messages accepted, want 20 (-M)", len(acked))
			}
			checkLoadDumps(t, flag, dir, acked, out)
		})
		t.Run("n"+flag, func(t *testing.T) {
			dir := t.TempDir()
			addr, summary := runUntilDone(t, append(engine, "-addr", "127.0.0.1:0", "-n", "4", "-h", "dump.test", flag, target(dir))...)
			acked := <-dumpLoad(addr, 8, -1, nil)
			checkLoadDumps(t, flag, dir, acked, summary())
		})
	}
}

// Dumps made at once whose ids collide (each id handed out three
// times) all get names of their own, never one another's: each file
// holds its own transaction, whole.
func TestDumpSameIDConcurrent(t *testing.T) {
	var next atomic.Uint64
	dir := t.TempDir()
	d := &dumper{tmpl: dir + "/", host: "dump.test", now: time.Now, logf: t.Errorf,
		newID: func() string { return fmt.Sprintf("%08x", (next.Add(1)-1)/3) }}
	const n = 30
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		w := d.capture(smtpsink.Transaction{Session: uint64(i + 1), RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 25}, Proto: "ESMTP", Helo: "c", MailArgs: "<a@x.test>", RcptArgs: []string{"<b@y.test>"}})
		w.Write([]byte(dumpLoadBody(i, 0)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := w.Close(); err != nil {
				t.Errorf("message %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	entries, _ := os.ReadDir(dir)
	if len(entries) != n {
		t.Errorf("%d files, want %d", len(entries), n)
	}
	acked := map[string]bool{}
	for i := range n {
		acked[fmt.Sprintf("c%d m0", i)] = true
	}
	checkLoadDumps(t, "-d", dir, acked, fmt.Sprintf("messages %d,", n))
}
