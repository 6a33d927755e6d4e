// Package latplot draws latency percentile spectra as SVG: for each
// distribution, its latency (y, linear) against its percentile (x, on the
// log scale of 1/(1-p) that HdrHistogram's plots use, so that 90%, 99%,
// 99.9%, ... are evenly spaced). The curves of several runs or engines share
// the axes, for comparing their tails.
//
// The output is a standalone SVG 1.1 document with nothing but lines, text
// and rectangles, so every browser and image viewer draws it.
package latplot

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A Curve is one latency distribution.
type Curve struct {
	Name string
	Hist *hdrhistogram.Histogram
	Unit time.Duration // what a value of Hist stands for (time.Nanosecond, time.Microsecond)
}

// ErrEmpty is returned for a plot with no curve, or a curve with no values.
var ErrEmpty = errors.New("latplot: nothing to plot")

// The plot's geometry, in SVG user units (pixels).
const (
	width, height     = 800, 500
	left, right       = 80, 50
	top, bottom       = 40, 60
	plotW, plotH      = width - left - right, height - top - bottom
	pointsPerDecade   = 50
	legendLineSpacing = 18
)

// colors are the curves' colors, in order (then repeated).
var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// A point is a percentile's x (decades of 1/(1-p)) and latency.
type point struct {
	x float64
	v time.Duration
}

// spectrum samples h at pointsPerDecade percentiles per decade, from 0 up
// to the last percentile its count resolves (1-1/count), and the maximum.
func spectrum(c Curve) []point {
	n := c.Hist.TotalCount()
	top := math.Log10(float64(n)) // 1/(1-p) = n at the last value
	var ps []point
	for i := 0; ; i++ {
		x := float64(i) / pointsPerDecade
		if x >= top {
			break
		}
		v := c.Hist.Min() // (ValueAtQuantile(0) is 0)
		if i > 0 {
			v = c.Hist.ValueAtQuantile(100 * (1 - math.Pow(10, -x)))
		}
		ps = append(ps, point{x, time.Duration(v) * c.Unit})
	}
	ps = append(ps, point{top, time.Duration(c.Hist.Max()) * c.Unit})
	return ps
}

// WriteSVG draws curves under title to w.
func WriteSVG(w io.Writer, title string, curves []Curve) error {
	if len(curves) == 0 {
		return ErrEmpty
	}
	specs := make([][]point, len(curves))
	decades, maxV := 1.0, time.Duration(0)
	for i, c := range curves {
		if c.Hist == nil || c.Hist.TotalCount() == 0 {
			return fmt.Errorf("%w: curve %q has no values", ErrEmpty, c.Name)
		}
		specs[i] = spectrum(c)
		last := specs[i][len(specs[i])-1]
		decades = max(decades, math.Ceil(last.x))
		maxV = max(maxV, last.v)
	}
	yMax, yStep, unit, unitName := yAxis(maxV)
	px := func(x float64) float64 { return left + x/decades*plotW }
	py := func(v time.Duration) float64 {
		return top + plotH - float64(v)/float64(yMax)*plotH
	}

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text class="title" x="%d" y="%d" text-anchor="middle" font-size="16">%s</text>`+"\n", width/2, top-15, esc(title))

	// The x axis: a tick per decade, labelled with its percentile.
	fmt.Fprintf(b, `<g class="x-axis">`+"\n")
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top+plotH, left+plotW, top+plotH)
	for d := 0; d <= int(decades); d++ {
		x := px(float64(d))
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, top+plotH)
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, top+plotH+18, percentLabel(d))
	}
	fmt.Fprintf(b, `<text class="label" x="%d" y="%d" text-anchor="middle">percentile</text>`+"\n", left+plotW/2, height-15)
	fmt.Fprintf(b, "</g>\n")

	// The y axis.
	fmt.Fprintf(b, `<g class="y-axis">`+"\n")
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, top+plotH)
	for v := time.Duration(0); v <= yMax; v += yStep {
		y := py(v)
		fmt.Fprintf(b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+plotW, y)
		fmt.Fprintf(b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, strconv.FormatFloat(float64(v)/float64(unit), 'f', -1, 64))
	}
	fmt.Fprintf(b, `<text class="label" x="20" y="%d" text-anchor="middle" transform="rotate(-90 20 %d)">latency (%s)</text>`+"\n", top+plotH/2, top+plotH/2, unitName)
	fmt.Fprintf(b, "</g>\n")

	// The curves, and the legend.
	for i, ps := range specs {
		color := colors[i%len(colors)]
		fmt.Fprintf(b, `<polyline class="curve" data-name="%s" fill="none" stroke="%s" stroke-width="2" points="`, esc(curves[i].Name), color)
		for j, p := range ps {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%.2f,%.2f", px(p.x), py(p.v))
		}
		fmt.Fprintf(b, `"/>`+"\n")
		ly := top + 10 + i*legendLineSpacing
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", left+15, ly, left+40, ly, color)
		fmt.Fprintf(b, `<text class="legend" x="%d" y="%d">%s</text>`+"\n", left+46, ly+4, esc(curves[i].Name))
	}
	fmt.Fprintf(b, "</svg>\n")
	return b.Flush()
}

// percentLabel names the percentile of decade d: 0%, 90%, 99%, 99.9%, ...
func percentLabel(d int) string {
	if d == 0 {
		return "0%"
	}
	p := 100 * (1 - math.Pow(10, -float64(d)))
	return strconv.FormatFloat(p, 'f', max(d-2, 0), 64) + "%"
}

// yAxis picks the y axis for latencies up to maxV: its top and tick step
// (1, 2 or 5 times a power of ten, about five ticks) and the unit its
// labels are in.
func yAxis(maxV time.Duration) (top, step, unit time.Duration, name string) {
	unit, name = time.Nanosecond, "ns"
	switch {
	case maxV >= 10*time.Second:
		unit, name = time.Second, "s"
	case maxV >= 10*time.Millisecond:
		unit, name = time.Millisecond, "ms"
	case maxV >= 10*time.Microsecond:
		unit, name = time.Microsecond, "µs"
	}
	maxV = max(maxV, 1)
	raw := float64(maxV) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	s := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if s = m * pow; s >= raw {
			break
		}
	}
	step = max(time.Duration(s), 1)
	top = (maxV + step - 1) / step * step
	return top, step, unit, name
}

// esc escapes s for XML text and attributes.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Rate writes a rate (messages a second) for a plot's title or a line of
// text: to the whole message a second, and below one a second to 3 digits
// ("%.0f" wrote -qps 0.001 as "0 msg/s", which reads as no load). wirespeed
// tcpperf and bench net write their loads with it.
func Rate(perSec float64) string {
	if perSec < 1 {
		return fmt.Sprintf("%.3g", perSec)
	}
	return fmt.Sprintf("%.0f", perSec)
}
