package cli

import (
	"flag"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestDecimalVar(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want int64
		err  string
	}{
		{"010", 10, ""},
		{"08", 8, ""},
		{"-010", -10, ""},
		{"0", 0, ""},
		{"0x10", 0, "want a decimal number"},
		{"1e3", 0, "want a decimal number"},
		{"", 0, "want a decimal number"},
		{strconv.FormatInt(math.MaxInt64, 10), math.MaxInt64, ""},
		{"9223372036854775808", 0, "out of range"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var n int64
		DecimalVar(fs, &n, "n", 7, "")
		err := fs.Parse([]string{"-n", c.arg})
		if c.err != "" {
			if err == nil || !strings.HasSuffix(err.Error(), c.err) {
				t.Errorf("-n %q: %v, want an error ending %q", c.arg, err, c.err)
			}
			continue
		}
		if err != nil || n != c.want {
			t.Errorf("-n %q: %d, %v; want %d", c.arg, n, err, c.want)
		}
	}
	// An int flag refuses what its int cannot hold, where int is 32 bits.
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var m int
	DecimalVar(fs, &m, "m", 1, "the `count`")
	if m != 1 {
		t.Errorf("default %d, want 1", m)
	}
	var usage strings.Builder
	fs.SetOutput(&usage)
	fs.PrintDefaults()
	if !strings.Contains(usage.String(), "(default 1)") {
		t.Errorf("usage %q does not give the default", usage.String())
	}
	if strconv.IntSize == 32 {
		if err := fs.Parse([]string{"-m", "4294967296"}); err == nil {
			t.Error("-m 4294967296 taken in a 32-bit int")
		}
	}
}
