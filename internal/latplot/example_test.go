package latplot_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/latplot"
)

func ExampleWriteSVG() {
	h := hdrhistogram.New(1, 1e9, 3)
	for i := range 1000 {
		h.RecordValue(int64(100 + i)) // µs
	}
	var svg bytes.Buffer
	if err := latplot.WriteSVG(&svg, "echo", []latplot.Curve{{Name: "std", Hist: h, Unit: time.Microsecond}}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(strings.Count(svg.String(), `class="curve"`), strings.Contains(svg.String(), ">99.9%<"))
	// Output:
	// 1 true
}
