package tcpperfcmd

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// merge is `wirespeed tcpperf merge [-json] FILE...`.
func merge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tcpperf merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed tcpperf merge [-json] FILE...")
		fmt.Fprintln(stderr, "Merges the -hdr-log interval logs of several runs (hosts), aligned by their absolute start times, and prints the percentiles of all their values.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cli.StatusError{Status: 2}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return cli.StatusError{Status: 2}
	}
	var logs []io.Reader
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		logs = append(logs, f)
	}
	res, err := tcpperf.MergeLogs(logs...)
	if err != nil {
		return err
	}
	if *jsonOut {
		return json.NewEncoder(stdout).Encode(res)
	}
	return Print(stdout, res)
}
