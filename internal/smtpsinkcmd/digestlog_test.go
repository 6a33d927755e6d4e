package smtpsinkcmd

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tearingFile writes to the file, but its write number fail (from 1)
// writes only the first bytes of its line, as a file system that fills
// up part-way (or a file size limit, ulimit -f) does, and fails.
type tearingFile struct {
	f    *os.File
	fail int

	mu sync.Mutex
	n  int
}

func (w *tearingFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n++; w.n == w.fail {
		n, _ := w.f.Write(p[:len(p)/2])
		return n, errNoSpace
	}
	return w.f.Write(p)
}

// A -digest-log line that fails part-way is cut off again: the log held
// the torn start of the line of a message refused with 451, and the next
// line went on after it. The log holds whole lines only, of the
// messages accepted (here the first and the third, which came while the
// sink stopped, in the session under way).
func TestRunDigestLogTornLine(t *testing.T) {
	logf := filepath.Join(t.TempDir(), "sums.txt")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runWith(context.Background(), []string{"-addr", "127.0.0.1:0", "-digest", "md5", "-digest-log", logf}, pw, io.Discard,
			hooks{digestLog: func(f *os.File) io.Writer { return &tearingFile{f: f, fail: 2} }})
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	first, _ := br.ReadString('\n')
	c, err := smtp.Dial(strings.TrimSpace(strings.TrimPrefix(first, "listening on ")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var want strings.Builder
	seq := 0 // of the messages accepted
	for i, body := range []string{"one\r\n", "two\r\n", "three\r\n"} {
		if err := c.Mail("a@x.test"); err != nil {
			t.Fatal(err)
		}
		if err := c.Rcpt("b@y.test"); err != nil {
			t.Fatal(err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
		err = w.Close()
		var te *textproto.Error
		if i == 1 {
			if !errors.As(err, &te) || te.Code != 451 {
				t.Errorf("message %d: %v, want 451", i+1, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
		sum := md5.Sum([]byte(body))
		seq++
		fmt.Fprintf(&want, "%s %d 1-%d\n", hex.EncodeToString(sum[:]), len(body), seq)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, br)
	if err := <-done; !errors.Is(err, errNoSpace) || !strings.Contains(err.Error(), "-digest-log") {
		t.Errorf("Run: %v; want the write's error, naming -digest-log", err)
	}
	if b, err := os.ReadFile(logf); err != nil || string(b) != want.String() {
		t.Errorf("digest log %q, %v; want %q", b, err, want.String())
	}
}
