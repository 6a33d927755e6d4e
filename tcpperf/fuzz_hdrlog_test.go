package tcpperf

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/latrec"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// FuzzMergeLogs reads arbitrary bytes as an interval log through
// MergeLogs and LogHistogram, what `wirespeed tcpperf merge` and its
// -plot call with each file's bytes: no panic, an error only ever
// matching ErrLog, the two agreeing, a result of sane numbers, and the
// log merged with itself counting its values twice.
func FuzzMergeLogs(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_123), []int64{5, 6, 7, 1000, 2000})
	f.Add(good.Bytes())
	lines := strings.SplitAfter(good.String(), "\n")
	f.Add([]byte(strings.Join(lines[5:], "")))                          // intervals only: no headers
	f.Add([]byte("Tag=connect," + lines[5]))                            // a tagged interval only
	f.Add([]byte(lines[0] + lines[1] + lines[2] + lines[3] + lines[4])) // headers only
	f.Add([]byte(strings.Replace(good.String(), "0.000000,", "1e300,", 1)))
	f.Add([]byte(good.String() + good.String())) // two logs in one
	for _, s := range []string{
		"",
		"0.1,0.2,0.3,HISTFAAAA!!!!\n",
		"#[StartTime: 1e300 (seconds since epoch), x]\n",
		"#[BaseTime: 9223000000 (seconds since epoch)]\n0.000,1000000.000,1.000,HISTFAAAACl42pNpmSzMwMDAxAABzFCaEUoz2X+AsQA/awKy\n",
		"Tag=x\n",
		"{\"mode\":\"echo\"}\n",
		"garbage\n\x00\xff more",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		res, err := MergeLogs(bytes.NewReader(log))
		h, herr := LogHistogram(bytes.NewReader(log))
		if err != nil {
			if !errors.Is(err, ErrLog) || res != nil {
				t.Fatalf("MergeLogs: %v (result %v), want an error matching ErrLog and no result", err, res)
			}
			if !errors.Is(herr, ErrLog) || h != nil {
				t.Fatalf("LogHistogram: %v, where MergeLogs failed with %v", herr, err)
			}
			return
		}
		if herr != nil || h.TotalCount() != res.Received {
			t.Fatalf("LogHistogram: %v, %d values; MergeLogs read %d", herr, h.TotalCount(), res.Received)
		}
		for _, v := range []float64{res.DurationS, res.AchievedQPS, res.P50, res.P9999, res.Max, res.Mean} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("a result of %+v", res)
			}
		}
		if res.Received < 0 || res.StartMs < 0 || float64(res.StartMs) > maxLogSec*1e3 || res.Mode != "merge" || res.Logs != 1 {
			t.Fatalf("a result of %+v", res)
		}
		twice, err := MergeLogs(bytes.NewReader(log), bytes.NewReader(log))
		if err != nil || twice.Received != 2*res.Received || twice.StartMs != res.StartMs || twice.DurationS != res.DurationS || twice.Max != res.Max {
			t.Fatalf("the log merged with itself: %v, %+v; alone %+v", err, twice, res)
		}
	})
}

// FuzzLogRoundTrip writes values with our own log writer, from a start
// anywhere in the times a log may hold, and reads them back with
// MergeLogs: the same count, the same percentiles as a histogram of the
// values, and the start and span the writer wrote (to the reader's
// millisecond).
func FuzzLogRoundTrip(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	f.Add(int64(1_700_000_000_123), uint64(1), uint16(250), int64(50_000))
	f.Add(int64(0), uint64(2), uint16(1), int64(1))
	f.Add(int64(9_000_000_000_000), uint64(3), uint16(101), int64(latrec.Max))
	f.Fuzz(func(t *testing.T, startMs int64, seed uint64, n uint16, scale int64) {
		n = n%1000 + 1
		// Keep the last interval's end within 2262.
		startMs = min(max(startMs, 0), 9_223_372_036_854-int64(n)*250-1000) // maxLogSec, in ms
		scale = min(max(scale, 1), latrec.Max)
		rng := rand.New(rand.NewPCG(seed, 0))
		values := make([]int64, n)
		want := newHist()
		for i := range values {
			values[i] = 1 + rng.Int64N(scale)
			if err := want.RecordValue(values[i]); err != nil {
				t.Fatal(err)
			}
		}
		var b bytes.Buffer
		writeLog(&b, time.UnixMilli(startMs), values)
		got, err := MergeLogs(&b)
		if err != nil {
			t.Fatalf("our own log: %v\n%s", err, b.String())
		}
		w := &Result{Mode: "merge", Logs: 1}
		percentiles(w, want)
		if got.Received != int64(n) || got.P50 != w.P50 || got.P9999 != w.P9999 || got.Max != w.Max || got.Mean != w.Mean {
			t.Fatalf("read back %+v\nwant %+v", got, w)
		}
		// To the millisecond, as written.
		intervals := (int64(n) + 99) / 100
		if got.StartMs != startMs {
			t.Errorf("starts at %d ms, written at %d", got.StartMs, startMs)
		}
		if d := got.DurationS - float64(intervals)*0.25; math.Abs(d) > 1e-9 {
			t.Errorf("spans %.4f s, written %.4f s", got.DurationS, float64(intervals)*0.25)
		}
	})
}
