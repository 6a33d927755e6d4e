package smtpsource

import (
	"context"
	"errors"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// A run whose HdrLog fails keeps its measurement: Run returns the whole
// result and an error matching ErrHdrLog and wrapping the writer's, and
// writes nothing to the log after the failed write. It returned no error
// at all, and the log was cut short in silence.
func TestHdrLogWriteError(t *testing.T) {
	addr := startSmtpsinkCfg(t, smtpsink.Config{}).Addr().String()
	cfg := func(log *tooltest.FailingWriter) Config {
		cfg := base(addr)
		cfg.Messages, cfg.Reuse, cfg.HdrLog = 3, true, log
		return cfg
	}
	// The whole log, for where to fail: the header, the intervals.
	whole := &tooltest.FailingWriter{N: 1 << 30}
	res, err := Run(context.Background(), cfg(whole))
	if err != nil || res.Delivered != 3 || whole.Failed {
		t.Fatalf("a log that takes everything: %v, %+v, want no error and 3 delivered", err, res)
	}
	size := whole.Got.Len()
	for _, n := range []int{0, 20, size / 2} {
		log := &tooltest.FailingWriter{N: n}
		res, err := Run(context.Background(), cfg(log))
		if !errors.Is(err, ErrHdrLog) || !errors.Is(err, tooltest.ErrFull) {
			t.Errorf("log failing after %d of %d bytes: %v, want ErrHdrLog wrapping the writer's error", n, size, err)
		}
		if res == nil || res.Delivered != 3 || res.Errors != 0 {
			t.Errorf("log failing after %d bytes: the result %+v, want the whole run's (3 delivered)", n, res)
		}
		if !log.Failed || log.After != 0 {
			t.Errorf("log failing after %d bytes: failed %v, %d writes after the failure, want one failure and none after", n, log.Failed, log.After)
		}
	}
	// A run that a fatal error ended (no STARTTLS offered) says both.
	c := cfg(&tooltest.FailingWriter{})
	c.TLS = true
	if res, err := Run(context.Background(), c); res == nil || !errors.Is(err, ErrStartTLS) || !errors.Is(err, ErrHdrLog) {
		t.Errorf("no STARTTLS, a failing log: %v (result %v), want ErrStartTLS and ErrHdrLog", err, res != nil)
	}
}
