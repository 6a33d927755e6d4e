package smtpsource

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A Verification compares the messages a run delivered with those a sink
// logged.
type Verification struct {
	Matched    int64 `json:"matched"`    // delivered and logged with the same digest and size
	Missing    int64 `json:"missing"`    // delivered, not logged (or logged with other bytes)
	Unexpected int64 `json:"unexpected"` // logged, not delivered by this run
}

// OK reports whether every message delivered was logged, and nothing else.
func (v *Verification) OK() bool { return v.Missing == 0 && v.Unexpected == 0 }

// Verify compares delivered (Result.Digests) with a sink's digest log:
// one line per message received, "<hex MD5> <bytes>" and maybe more
// fields, which are ignored, as are empty lines and lines starting with
// '#'. Messages are matched by digest and size, in any order, as many
// times as each was sent. A line that is not of this form is an error.
func Verify(log io.Reader, delivered []Digest) (*Verification, error) {
	want := map[Digest]int64{}
	for _, d := range delivered {
		want[d]++
	}
	v := &Verification{}
	sc := bufio.NewScanner(log)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		var d Digest
		if len(f) < 2 || hex.DecodedLen(len(f[0])) != 16 {
			return nil, fmt.Errorf("smtpsource: digest log line %d: %q is not \"<hex md5> <bytes> ...\"", n, line)
		}
		if _, err := hex.Decode(d.MD5[:], []byte(f[0])); err != nil {
			return nil, fmt.Errorf("smtpsource: digest log line %d: %w", n, err)
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("smtpsource: digest log line %d: bad size %q", n, f[1])
		}
		d.Size = size
		if want[d] > 0 {
			want[d]--
			v.Matched++
		} else {
			v.Unexpected++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("smtpsource: reading the digest log: %w", err)
	}
	for _, n := range want {
		v.Missing += n
	}
	return v, nil
}
