package tcpperf

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// A failingLog takes its first n bytes, then fails: a full disk, a
// closed pipe. It counts the writes tried after the one that failed.
type failingLog struct {
	n      int
	got    bytes.Buffer
	failed bool
	after  int // writes after the failure
}

var errLogFull = errors.New("log device full")

func (w *failingLog) Write(p []byte) (int, error) {
	if w.failed {
		w.after++
		return 0, errLogFull
	}
	if room := w.n - w.got.Len(); len(p) > room {
		w.failed = true
		w.got.Write(p[:room])
		return room, errLogFull
	}
	return w.got.Write(p)
}

// A run whose HdrLog fails keeps its measurement: Run returns the whole
// result and an error matching ErrHdrLog and wrapping the writer's, and
// writes nothing to the log after the failed write. It returned no error
// at all, and went on writing to the failed writer.
func TestHdrLogWriteError(t *testing.T) {
	cfg := func(log *failingLog) Config {
		return Config{Addr: server(t, echo), QPS: 200, Duration: 50 * time.Millisecond, HdrLog: log}
	}
	// The whole log, for where to fail: the header, the intervals, the
	// closing comment.
	whole := &failingLog{n: 1 << 30}
	res, err := RunWith(context.Background(), cfg(whole), nil, newFakeClock())
	if err != nil || res.Received != 10 || whole.failed {
		t.Fatalf("a log that takes everything: %v, %d received, want no error and 10", err, res.Received)
	}
	size := whole.got.Len()
	for _, n := range []int{0, 20, size / 2, size - 5} {
		log := &failingLog{n: n}
		res, err := RunWith(context.Background(), cfg(log), nil, newFakeClock())
		if !errors.Is(err, ErrHdrLog) || !errors.Is(err, errLogFull) {
			t.Errorf("log failing after %d of %d bytes: %v, want ErrHdrLog wrapping the writer's error", n, size, err)
		}
		if res == nil || res.Received != 10 || res.Errors != 0 {
			t.Errorf("log failing after %d bytes: the result %+v, want the whole run's (10 received)", n, res)
		}
		if !log.failed || log.after != 0 {
			t.Errorf("log failing after %d bytes: failed %v, %d writes after the failure, want one failure and none after", n, log.failed, log.after)
		}
	}
}
