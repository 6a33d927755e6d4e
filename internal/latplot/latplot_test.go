package latplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// svgNode is any element of the document, with its attributes, text and
// children.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []svgNode  `xml:",any"`
}

func (n *svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// all returns the elements under n (n included) for which keep is true.
func (n *svgNode) all(keep func(*svgNode) bool) []*svgNode {
	var out []*svgNode
	if keep(n) {
		out = append(out, n)
	}
	for i := range n.Nodes {
		out = append(out, n.Nodes[i].all(keep)...)
	}
	return out
}

func byClass(c string) func(*svgNode) bool {
	return func(n *svgNode) bool { return n.attr("class") == c }
}

func parse(t *testing.T, b []byte) *svgNode {
	t.Helper()
	var root svgNode
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root %v, want svg", root.XMLName)
	}
	return &root
}

type xy struct{ x, y float64 }

func points(t *testing.T, n *svgNode) []xy {
	t.Helper()
	var ps []xy
	for _, f := range strings.Fields(n.attr("points")) {
		a, b, ok := strings.Cut(f, ",")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad point %q", f)
		}
		ps = append(ps, xy{x, y})
	}
	return ps
}

// hist returns a histogram of n values, value i (1-based) being f(i).
func hist(n int, f func(i int) int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 1e10, 3)
	for i := 1; i <= n; i++ {
		h.RecordValue(f(i))
	}
	return h
}

// TestWriteSVG draws two curves and reads the plot back: axes, labels and
// legend are there, each curve is monotone, and its points sit where the
// histogram's percentiles (the oracle) put them.
func TestWriteSVG(t *testing.T) {
	fast := hist(10000, func(i int) int64 { return int64(50 + i/100) }) // µs: 50 to 150
	slow := hist(100000, func(i int) int64 {
		if i%1000 == 0 {
			return 5000 // a tail at 5 ms
		}
		return 80
	})
	curves := []Curve{{"gnet", fast, time.Microsecond}, {"std <&>", slow, time.Microsecond}}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "echo, 10k connections", curves); err != nil {
		t.Fatal(err)
	}
	root := parse(t, buf.Bytes())

	texts := func(class string) []string {
		var s []string
		for _, n := range root.all(byClass(class)) {
			s = append(s, n.Text)
		}
		return s
	}
	if got := texts("title"); len(got) != 1 || got[0] != "echo, 10k connections" {
		t.Errorf("title %q", got)
	}
	// 100000 values resolve 5 decades: 0% to 99.999%.
	wantX := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}
	var xTicks []string
	for _, n := range root.all(func(n *svgNode) bool { return n.attr("class") == "x-axis" }) {
		for _, m := range n.all(byClass("tick")) {
			xTicks = append(xTicks, m.Text)
		}
	}
	if fmt.Sprint(xTicks) != fmt.Sprint(wantX) {
		t.Errorf("x ticks %q, want %q", xTicks, wantX)
	}
	if got := texts("label"); fmt.Sprint(got) != fmt.Sprint([]string{"percentile", "latency (µs)"}) {
		t.Errorf("axis labels %q", got)
	}
	if got := texts("legend"); fmt.Sprint(got) != fmt.Sprint([]string{"gnet", "std <&>"}) {
		t.Errorf("legend %q", got)
	}

	// The y axis: tick values, read back, map latency to y.
	var ys []xy // (value in µs, y)
	for _, n := range root.all(func(n *svgNode) bool { return n.attr("class") == "y-axis" }) {
		for _, m := range n.all(byClass("tick")) {
			v, err := strconv.ParseFloat(m.Text, 64)
			y, err2 := strconv.ParseFloat(m.attr("y"), 64)
			if err != nil || err2 != nil {
				t.Fatalf("bad y tick %q at %q", m.Text, m.attr("y"))
			}
			ys = append(ys, xy{v, y - 4})
		}
	}
	if len(ys) < 3 || ys[0].x != 0 || ys[len(ys)-1].x < 5000 {
		t.Fatalf("y ticks %v: want 0 up to at least the 5 ms tail", ys)
	}
	usAt := func(y float64) float64 { // linear, from the first and last ticks
		a, b := ys[0], ys[len(ys)-1]
		return a.x + (y-a.y)/(b.y-a.y)*(b.x-a.x)
	}
	// The x axis: decade d at the tick's x.
	xLeft, _ := strconv.ParseFloat(root.all(byClass("grid"))[0].attr("x1"), 64)
	xRight, _ := strconv.ParseFloat(root.all(byClass("grid"))[len(wantX)-1].attr("x1"), 64)
	decadeAt := func(x float64) float64 { return (x - xLeft) / (xRight - xLeft) * float64(len(wantX)-1) }

	got := root.all(byClass("curve"))
	if len(got) != len(curves) {
		t.Fatalf("%d curves, want %d", len(got), len(curves))
	}
	for i, n := range got {
		if n.attr("data-name") != curves[i].Name {
			t.Errorf("curve %d named %q, want %q", i, n.attr("data-name"), curves[i].Name)
		}
		ps := points(t, n)
		if len(ps) < 2*pointsPerDecade {
			t.Fatalf("curve %q: %d points", curves[i].Name, len(ps))
		}
		for j := 1; j < len(ps); j++ {
			if ps[j].x <= ps[j-1].x || ps[j].y > ps[j-1].y {
				t.Fatalf("curve %q not monotone at point %d: %v then %v", curves[i].Name, j, ps[j-1], ps[j])
			}
		}
		h := curves[i].Hist
		if got, want := usAt(ps[0].y), float64(h.Min()); math.Abs(got-want) > 1 {
			t.Errorf("curve %q starts at %.1f µs, want the minimum %.1f µs", curves[i].Name, got, want)
		}
		for _, p := range ps[1 : len(ps)-1] {
			d := decadeAt(p.x)
			want := float64(h.ValueAtQuantile(100 * (1 - math.Pow(10, -d))))
			if got := usAt(p.y); math.Abs(got-want) > 1 { // 1 µs: a tenth of a pixel
				t.Fatalf("curve %q at decade %.2f: %.1f µs, want %.1f µs", curves[i].Name, d, got, want)
			}
		}
		last := ps[len(ps)-1]
		if got, want := usAt(last.y), float64(h.Max()); math.Abs(got-want) > 1 {
			t.Errorf("curve %q ends at %.1f µs, want the maximum %.1f µs", curves[i].Name, got, want)
		}
	}
}

func TestWriteSVGEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "x", nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("no curves: %v", err)
	}
	err := WriteSVG(&buf, "x", []Curve{{"a", hdrhistogram.New(1, 10, 3), time.Microsecond}})
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("an empty histogram: %v", err)
	}
}

func TestYAxis(t *testing.T) {
	for _, c := range []struct {
		max       time.Duration
		top, step time.Duration
		unit      string
	}{
		{5 * time.Microsecond, 5 * time.Microsecond, time.Microsecond, "ns"},
		{150 * time.Microsecond, 150 * time.Microsecond, 50 * time.Microsecond, "µs"},
		{160 * time.Microsecond, 200 * time.Microsecond, 50 * time.Microsecond, "µs"},
		{5 * time.Millisecond, 5 * time.Millisecond, time.Millisecond, "µs"},
		{282 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond, "ms"},
		{1, 1, 1, "ns"},
	} {
		top, step, _, unit := yAxis(c.max)
		if top != c.top || step != c.step || unit != c.unit {
			t.Errorf("yAxis(%v) = %v, %v, %s; want %v, %v, %s", c.max, top, step, unit, c.top, c.step, c.unit)
		}
	}
}

// Rates below one a second keep 3 digits; from one up, whole.
func TestRate(t *testing.T) {
	for in, want := range map[float64]string{0.001: "0.001", 0.5: "0.5", 0.12345: "0.123", 1: "1", 1000.4: "1000", 60000: "60000"} {
		if got := Rate(in); got != want {
			t.Errorf("Rate(%g) = %q, want %q", in, got, want)
		}
	}
}
