package tcpperf

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// newLogWriter starts an HdrHistogram interval log on w whose start and
// base time is start, to the millisecond, and returns the writer for its
// intervals. hdrhistogram-go's OutputStartTime and OutputBaseTime write
// whole seconds, which would misalign the logs of several hosts by up to
// a second, so the two headers are written here, in the format of
// HdrHistogram's Java HistogramLogWriter ("%.3f" seconds since the epoch),
// which the Go, Java and JavaScript readers parse.
func newLogWriter(w io.Writer, start time.Time) *hdrhistogram.HistogramLogWriter {
	ms := start.UnixMilli()
	hlog := hdrhistogram.NewHistogramLogWriter(w)
	hlog.SetBaseTime(ms)
	hlog.OutputLogFormatVersion()
	hlog.OutputComment("[tcpperf latencies in nanoseconds]")
	fmt.Fprintf(w, "#[StartTime: %d.%03d (seconds since epoch), %s]\n", ms/1000, ms%1000,
		time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	fmt.Fprintf(w, "#[BaseTime: %d.%03d (seconds since epoch)]\n", ms/1000, ms%1000)
	hlog.OutputLegend()
	return hlog
}

// LogHistogram reads HdrHistogram interval logs (such as a run's HdrLog)
// and returns one histogram of all their latencies, in nanoseconds: what
// internal/latplot draws. As in MergeLogs, tagged intervals are left out,
// and a log that is none, or no log at all, is an error matching ErrLog.
func LogHistogram(logs ...io.Reader) (*hdrhistogram.Histogram, error) {
	all, _, _, err := mergeLogs(logs)
	return all, err
}

// mergeLogs merges the intervals of logs and returns their earliest start
// and latest end, in Unix milliseconds.
func mergeLogs(logs []io.Reader) (all *hdrhistogram.Histogram, first, last int64, err error) {
	all = newHist()
	first, last = int64(math.MaxInt64), int64(math.MinInt64)
	if len(logs) == 0 {
		// A merge of nothing would read as a run that measured nothing.
		return nil, 0, 0, fmt.Errorf("%w: no logs", ErrLog)
	}
	for i, log := range logs {
		name := fmt.Sprintf("log %d", i+1)
		if f, ok := log.(*os.File); log == nil || ok && f == nil {
			return nil, 0, 0, fmt.Errorf("%w: %s: nil reader", ErrLog, name)
		}
		if n, ok := log.(interface{ Name() string }); ok && n.Name() != "" {
			name = n.Name() // a file's
		}
		cl := newCheckedLog(log)
		lr := hdrhistogram.NewHistogramLogReader(cl)
		for n, tagged := 0, 0; ; {
			h, err := lr.NextIntervalHistogram()
			if err != nil && err != cl.err {
				// Not the checker's (which names the line, or is the
				// log's read error) but Decode's, of what is wrong in a
				// histogram past its header: the line the reader is at.
				// The checker hands the reader a line at a time, so that
				// is the checker's last.
				err = fmt.Errorf("line %d: %w", cl.line, err)
			}
			if err != nil {
				return nil, 0, 0, fmt.Errorf("%w: %s: %w", ErrLog, name, err)
			}
			if h == nil && n == 0 {
				// Not an interval log, the empty one of a run that
				// measured nothing, or one of other measures only: a
				// merge without it would look whole.
				if tagged > 0 {
					return nil, 0, 0, fmt.Errorf("%w: %s: no untagged intervals (%d tagged, another measure)", ErrLog, name, tagged)
				}
				if !cl.logLike && cl.line > 0 {
					// Lines, and none of a log: not "no intervals",
					// which reads as a log of a run that measured nothing.
					return nil, 0, 0, fmt.Errorf("%w: %s: not an interval log (no HdrHistogram header, legend or interval line)", ErrLog, name)
				}
				return nil, 0, 0, fmt.Errorf("%w: %s: no intervals", ErrLog, name)
			}
			if h == nil {
				break
			}
			if h.Tag() != "" {
				tagged++
				continue // another measure than the log's untagged one
			}
			n++
			// The interval's times to the millisecond, rounded: the
			// reader's are truncated, and may be one short (see
			// checkedLog). The reader has read no line past the
			// interval's.
			startMs, endMs := cl.intervalStart, cl.intervalEnd
			if startMs < 0 || float64(endMs) > maxLogSec*1e3 {
				// Each time is within maxLogSec, the sum of the base
				// time and an interval's start or end not always.
				return nil, 0, 0, fmt.Errorf("%w: %s: untagged interval %d spans %d to %d ms since the epoch, past 2262 (the end of Unix time in nanoseconds)", ErrLog, name, n, startMs, endMs)
			}
			if dropped := all.Merge(h); dropped > 0 {
				return nil, 0, 0, fmt.Errorf("%w: %s: %d values out of range", ErrLog, name, dropped)
			}
			first, last = min(first, startMs), max(last, endMs)
		}
	}
	return all, first, last, nil
}

// ErrLog reports an interval log that cannot be read.
var ErrLog = errors.New("tcpperf: bad interval log")

// MergeLogs reads HdrHistogram interval logs (such as several hosts'
// HdrLog of one run) with hdrhistogram-go's reader and returns the
// percentiles of all their values together. Intervals are placed by their
// absolute times (each log's base time plus the interval's offset), so
// the result spans from the earliest interval start to the latest end,
// and AchievedQPS is the combined rate over that span. A run's log ends
// its last interval with the run's send span (Result.SendSpanS: the
// measurement's end, or its latest send if later), so the merge of one
// log has the run's SendSpanS as its DurationS and the run's AchievedQPS
// (to the log's millisecond), and a merge of several hosts' logs spans
// from the first start to the last of their send spans' ends; a log that
// tcpperf wrote before it recorded the span ends with the measurement,
// whose duration then stands for the span. Only untagged
// intervals are merged: a log may carry other measures under tags (as
// smtp-source's carries each phase's latencies beside its messages'). A
// log with no untagged interval (not a log, an empty one, or one of other
// measures only) is an error matching ErrLog, as one that cannot be read;
// the error names the log by its Name method if it has one (an *os.File
// has), else by its place among logs ("log 2"). So are no logs at all, and
// a nil one (a nil io.Reader or *os.File). So is a log with a time
// the reader would read loosely (it took an interval start of 1e300 for
// 300 s): not a plain decimal number of seconds, past 2262, or an interval
// starting before the previous one of its tag (a log's StartTime or
// BaseTime header starts the order again, as where two logs are joined);
// the error names the line. So is an interval whose histogram
// hdrhistogram-go cannot decode (not base64, a wrong cookie, a truncated or
// corrupt zlib stream), or whose header declares more than 2^20 counts (8
// MiB: any range at up to 4 significant figures; ours are 1 ns to 1 h at
// 3), which is refused from its header, before hdrhistogram-go would
// allocate them; and a line longer than 16 MiB, of which no more is read.
func MergeLogs(logs ...io.Reader) (*Result, error) {
	all, first, last, err := mergeLogs(logs)
	if err != nil {
		return nil, err
	}
	res := &Result{Mode: "merge", Logs: len(logs)}
	percentiles(res, all)
	if first <= last {
		res.StartMs = first
		res.DurationS = float64(last-first) / 1e3
	}
	if res.DurationS > 0 {
		res.AchievedQPS = float64(res.Received) / res.DurationS
	}
	return res, nil
}
