package cli

import (
	"flag"
	"slices"
	"testing"
)

func TestGrouped(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("c", false, "")
	fs.Bool("d", false, "")
	fs.Int("m", 1, "")
	fs.String("l", "", "")
	fs.String("f", "", "")
	fs.Bool("tls", false, "")
	fs.Duration("timeout", 0, "")
	for _, c := range []struct{ in, want []string }{
		{[]string{"-dc", "-m", "3", "host"}, []string{"-d", "-c", "-m", "3", "host"}},
		{[]string{"-m3", "-l1000:2000", "host"}, []string{"-m", "3", "-l", "1000:2000", "host"}},
		{[]string{"-dcm", "5", "host"}, []string{"-d", "-c", "-m", "5", "host"}},
		{[]string{"-dcm5"}, []string{"-d", "-c", "-m", "5"}},
		{[]string{"-cf", "x"}, []string{"-c", "-f", "x"}},
		// A value that does not start with a digit: more likely a
		// misspelt flag (or -help) than an attached value.
		{[]string{"-fuser", "-mx", "-help"}, []string{"-fuser", "-mx", "-help"}},
		// Flags of their own, and the values of flags, stay as they are.
		{[]string{"-tls", "-timeout", "1s", "-f", "-dc", "--m=2", "-c=false"}, []string{"-tls", "-timeout", "1s", "-f", "-dc", "--m=2", "-c=false"}},
		// Unknown letters are fs.Parse's to refuse, and operands end it.
		{[]string{"-dx", "--dc"}, []string{"-dx", "--dc"}},
		{[]string{"host", "-dc"}, []string{"host", "-dc"}},
		{[]string{"--", "-dc"}, []string{"--", "-dc"}},
		{[]string{"-m"}, []string{"-m"}},
	} {
		got := Grouped(fs, c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("Grouped(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// What it gives fs.Parse parses as getopt would have.
	if err := fs.Parse(Grouped(fs, []string{"-dcm7", "-l", "ab", "host"})); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("d").Value.String() != "true" || fs.Lookup("c").Value.String() != "true" || fs.Lookup("m").Value.String() != "7" || fs.Lookup("l").Value.String() != "ab" || !slices.Equal(fs.Args(), []string{"host"}) {
		t.Errorf("parsed d=%v c=%v m=%v l=%v args %q", fs.Lookup("d").Value, fs.Lookup("c").Value, fs.Lookup("m").Value, fs.Lookup("l").Value, fs.Args())
	}
}
