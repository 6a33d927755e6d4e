package tcpperfcmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/latplot"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// merge is `wirespeed tcpperf merge [-json] FILE...`.
func merge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tcpperf merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	plot := fs.String("plot", "", "draw each log's latency percentile spectrum, and all of them merged, to this SVG file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed tcpperf merge [-json] [-plot FILE.svg] FILE...")
		fmt.Fprintln(fs.Output(), "Merges the -hdr-log interval logs of several runs (hosts), aligned by their absolute start times, and prints the percentiles of all their values (untagged intervals: a tagged one, such as smtp-source's per-phase latencies, is another measure).")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args, "wirespeed tcpperf merge", stdout); err != nil {
		return cli.ParseError(err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return cli.StatusError{Status: 2}
	}
	for _, name := range fs.Args() {
		if *plot != "" && sameFile(name, *plot) {
			// The plot would overwrite the log it was drawn from.
			return cli.Usagef("tcpperf merge: -plot %s is one of the logs merged", *plot)
		}
	}
	var data [][]byte
	for _, name := range fs.Args() {
		b, err := cli.ReadFileMax(name, cli.MaxLog, "a latency log")
		if err != nil {
			return err
		}
		data = append(data, b)
	}
	readers := func(bs ...[]byte) []io.Reader {
		rs := make([]io.Reader, len(bs))
		for i, b := range bs {
			rs[i] = bytes.NewReader(b)
		}
		return rs
	}
	// Named, so that an error says which file (not "log 1").
	named := make([]io.Reader, len(data))
	for i, b := range data {
		named[i] = namedReader{bytes.NewReader(b), fs.Arg(i)}
	}
	res, err := tcpperf.MergeLogs(named...)
	if err != nil {
		return err
	}
	if *plot != "" {
		var curves []latplot.Curve
		for i, b := range data {
			h, err := tcpperf.LogHistogram(readers(b)...)
			if err != nil {
				return fmt.Errorf("%s: %w", fs.Arg(i), err)
			}
			curves = append(curves, latplot.Curve{Name: filepath.Base(fs.Arg(i)), Hist: h, Unit: time.Nanosecond})
		}
		if len(data) > 1 {
			h, _ := tcpperf.LogHistogram(readers(data...)...)
			curves = append(curves, latplot.Curve{Name: "merged", Hist: h, Unit: time.Nanosecond})
		}
		if err := writePlot(*plot, fmt.Sprintf("tcpperf merge: %d logs", len(data)), curves); err != nil {
			return err
		}
	}
	if *jsonOut {
		return json.NewEncoder(stdout).Encode(res)
	}
	return Print(stdout, res)
}

// A namedReader is a file's contents, named as the file for MergeLogs'
// errors.
type namedReader struct {
	*bytes.Reader
	name string
}

func (r namedReader) Name() string { return r.name }
