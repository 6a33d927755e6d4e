package smtpsourcecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// closeCounting is a -hdr-log file that counts its Closes.
type closeCounting struct {
	io.WriteCloser
	mu     sync.Mutex
	closes int
}

func (c *closeCounting) Close() error {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	return c.WriteCloser.Close()
}

// cancelAfter is a sink's digest log that cancels once n messages have
// come.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return len(p), nil
}

// A run interrupted (SIGINT cancels the command's context) in mid-run
// writes a whole -hdr-log and closes it: the log reads to its end, and its
// delivered messages' latencies (untagged) are the result's.
func TestHdrLogInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := sink{log: &cancelAfter{n: 5, cancel: cancel}}
	addr := s.start(t)
	path := filepath.Join(t.TempDir(), "h.log")
	var file *closeCounting
	createLog := func(path string) (io.WriteCloser, error) {
		f, err := cli.CreateOutput(path)
		if err != nil {
			return nil, err
		}
		file = &closeCounting{WriteCloser: f}
		return file, nil
	}
	var out, errb bytes.Buffer
	err := run(ctx, []string{"-d", "-m", "1000000", "-json", "-q", "-hdr-log", path, addr}, &out, &errb, createLog)
	if status, _ := cli.Status(err); status != 1 {
		t.Errorf("interrupted: %v (status %d), want status 1", err, status)
	}
	var res smtpsource.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.Interrupted || res.Delivered < 4 {
		t.Fatalf("%v: %s; want an interrupted result", err, out.String())
	}
	if file == nil || file.closes != 1 {
		t.Errorf("-hdr-log closed %d times, want once", file.closes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	var delivered int64
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("the log: %v\n%s", err, b)
		}
		if h == nil {
			break
		}
		if h.Tag() == "" {
			delivered += h.TotalCount()
		}
	}
	if delivered != res.Delivered {
		t.Errorf("the log holds %d delivered messages' latencies, the result %d", delivered, res.Delivered)
	}
}

// fullAfter is a -hdr-log file on a disk that fills up after n bytes: the
// write that passes them writes what fits and fails.
type fullAfter struct {
	closeCounting
	n int
}

func (f *fullAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.WriteCloser.Write(p[:f.n])
		f.n = 0
		return n, errNoSpace
	}
	f.n -= len(p)
	return f.WriteCloser.Write(p)
}

// A disk that fills up in mid-log (past the header, TestHdrLogWriteError
// fails the first write) fails the command, status 1, with the write's
// error naming -hdr-log, after the whole result; the log is closed and
// holds what was written before, nothing after.
func TestHdrLogFullMidRun(t *testing.T) {
	var s sink
	addr := s.start(t)
	path := filepath.Join(t.TempDir(), "h.log")
	const room = 400 // the header is about 300 bytes
	var file *fullAfter
	createLog := func(path string) (io.WriteCloser, error) {
		f, err := cli.CreateOutput(path)
		if err != nil {
			return nil, err
		}
		file = &fullAfter{closeCounting: closeCounting{WriteCloser: f}, n: room}
		return file, nil
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-d", "-m", "5", "-q", "-hdr-log", path, addr}, &out, &errb, createLog)
	if status, print := cli.Status(err); status != 1 || !print || !errors.Is(err, errNoSpace) || !errors.Is(err, smtpsource.ErrHdrLog) ||
		!strings.HasPrefix(err.Error(), "smtp-source: -hdr-log: ") {
		t.Errorf("%v (status %d), want status 1 and the write's error naming -hdr-log", err, status)
	}
	if !strings.Contains(out.String(), "delivered 5 of 5") {
		t.Errorf("the result is not printed whole:\n%s", out.String())
	}
	if file == nil || file.closes != 1 {
		t.Fatalf("-hdr-log closed %d times, want once", file.closes)
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != room || !bytes.Contains(b, []byte("#[StartTime: ")) {
		t.Errorf("the log: %d bytes, %v; want the %d written before the disk was full", len(b), err, room)
	}
}

// A run that opens no connection (ErrConnect) has written nothing to
// -hdr-log, but the file's Close may still fail: that is said too. It was
// dropped, the connect's error alone returned.
func TestHdrLogCloseErrorNoConnection(t *testing.T) {
	createLog := func(path string) (io.WriteCloser, error) {
		f, err := cli.CreateOutput(path)
		if err != nil {
			return nil, err
		}
		return closeFailing{f}, nil
	}
	path := filepath.Join(t.TempDir(), "h.log")
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-q", "-hdr-log", path, "127.0.0.1:1"}, &out, &errb, createLog)
	if status, _ := cli.Status(err); status != 1 || !errors.Is(err, smtpsource.ErrConnect) || !errors.Is(err, errLogClose) ||
		!strings.Contains(err.Error(), "\nsmtp-source: -hdr-log: ") {
		t.Errorf("%v (status %d), want status 1, the connect's error and the close's, naming -hdr-log", err, status)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-hdr-log %s: %v; want none made", path, err)
	}
}
