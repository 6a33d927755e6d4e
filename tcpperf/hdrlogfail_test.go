package tcpperf

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// A run whose HdrLog fails keeps its measurement: Run returns the whole
// result and an error matching ErrHdrLog and wrapping the writer's, and
// writes nothing to the log after the failed write. It returned no error
// at all, and went on writing to the failed writer.
func TestHdrLogWriteError(t *testing.T) {
	cfg := func(log *tooltest.FailingWriter) Config {
		return Config{Addr: server(t, echo), QPS: 200, Duration: 50 * time.Millisecond, HdrLog: log}
	}
	// The whole log, for where to fail: the header, the intervals, the
	// closing comment.
	whole := &tooltest.FailingWriter{N: 1 << 30}
	res, err := RunWith(context.Background(), cfg(whole), nil, newFakeClock())
	if err != nil || res.Received != 10 || whole.Failed {
		t.Fatalf("a log that takes everything: %v, %d received, want no error and 10", err, res.Received)
	}
	// Not near the end: the intervals' encoded latencies, measured on the
	// network, vary the size from run to run by a few bytes (a log failing
	// 5 bytes before the end of one run's took all of another's).
	size := whole.Got.Len()
	for _, n := range []int{0, 20, size / 2, size * 3 / 4} {
		log := &tooltest.FailingWriter{N: n}
		res, err := RunWith(context.Background(), cfg(log), nil, newFakeClock())
		if !errors.Is(err, ErrHdrLog) || !errors.Is(err, tooltest.ErrFull) {
			t.Errorf("log failing after %d of %d bytes: %v, want ErrHdrLog wrapping the writer's error", n, size, err)
		}
		if res == nil || res.Received != 10 || res.Errors != 0 {
			t.Errorf("log failing after %d bytes: the result %+v, want the whole run's (10 received)", n, res)
		}
		if !log.Failed || log.After != 0 {
			t.Errorf("log failing after %d bytes: failed %v, %d writes after the failure, want one failure and none after", n, log.Failed, log.After)
		}
	}
}
