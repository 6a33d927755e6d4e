package tcpperf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// hdrhistogram-go's log reader takes the first run of digits and dots
// before a comma for each time of an interval line, wherever it starts,
// and the digits and dots after "StartTime: " or "BaseTime: " for a
// header's: so an interval start of 1e300 read as 300 s, 5e9 as 9 s, -5
// as 5 s, and a StartTime of 1e300 as 1 s, each with no error and a wrong
// span. A checkedLog reads a log on to that reader line by line and fails
// the read, naming the line, at one it would read so loosely, or drop
// though it starts as an interval (a length of 1e300), and at one whose
// times are out of bounds or out of order.
type checkedLog struct {
	r       *bufio.Reader
	line    int
	pending []byte
	err     error
	// The previous interval start of each tag ("" untagged) since the
	// last StartTime or BaseTime header (a log concatenated to another
	// starts again there).
	prev map[string]float64
	// logLike: a line of an interval log was read (a comment or header,
	// the legend, or an interval), so a log with no interval is one, not
	// some other file.
	logLike bool
}

func newCheckedLog(r io.Reader) *checkedLog {
	return &checkedLog{r: bufio.NewReader(r), prev: map[string]float64{}}
}

var (
	// What the reader takes for an interval (after a "Tag=...," prefix):
	// its pattern, unanchored.
	looseInterval = regexp.MustCompile(`([\d\.]*),([\d\.]*),([\d\.]*),(.*)`)
	// What an interval line must be: three decimal numbers of seconds
	// (start, length, max), as HdrHistogram's writers write them, and the
	// histogram.
	strictInterval = regexp.MustCompile(`^([^,]*),([^,]*),([^,]*),([^,\s]+)\r?\n?$`)
	decimal        = regexp.MustCompile(`^(\d+(\.\d*)?|\.\d+)$`)
	// A header the reader reads a time from, and what must follow the
	// number: the rest of the header.
	timeHeader = regexp.MustCompile(`^#\[(StartTime|BaseTime): ([^\s\]]*)`)
)

// maxLogSec bounds every time of a log, in seconds: 2262, where Unix time
// in nanoseconds (time.Time's UnixNano, the runs' clocks) overflows an
// int64. A time past it is no run's.
const maxLogSec = float64(1<<63-1) / 1e9

func (c *checkedLog) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			c.err = err
		}
		if len(line) == 0 {
			continue
		}
		c.line++
		if bad := c.check(string(line)); bad != nil {
			c.err = fmt.Errorf("line %d: %w", c.line, bad)
			return 0, c.err
		}
		c.pending = line
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// seconds parses a time of the log, strictly.
func seconds(what, s string) (float64, error) {
	if !decimal.MatchString(s) {
		return 0, fmt.Errorf("%s %q is not a decimal number of seconds", what, s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v > maxLogSec {
		return 0, fmt.Errorf("%s %s s is past 2262 (the end of Unix time in nanoseconds)", what, s)
	}
	return v, nil
}

// check returns what is wrong with line, a whole line of the log.
func (c *checkedLog) check(line string) error {
	if strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"StartTimestamp"`) {
		c.logLike = true // a comment, a header or the legend
		m := timeHeader.FindStringSubmatch(line)
		if m == nil {
			return nil // a comment
		}
		if _, err := seconds(m[1], m[2]); err != nil {
			return err
		}
		clear(c.prev) // a log's header: its intervals' order starts again
		return nil
	}
	if !strings.HasPrefix(line, "Tag=") && !strings.ContainsAny(line[:1], "0123456789.+-") && !looseInterval.MatchString(line) {
		// Neither what the reader reads nor what starts as an interval
		// does: the legend, a blank line, or no log (a run's JSON),
		// which the merge then finds no interval in.
		return nil
	}
	tag := ""
	if strings.HasPrefix(line, "Tag=") {
		i := strings.Index(line, ",")
		if i < 0 {
			return errors.New("a tag and no interval")
		}
		tag, line = line[4:i], line[i+1:]
	}
	// The reader takes what its pattern finds anywhere in the line, and
	// drops a line where it finds nothing (1e300 for a length): neither
	// is an interval as written.
	m := strictInterval.FindStringSubmatch(line)
	if m == nil {
		return errors.New("not an interval (start,length,max,histogram)")
	}
	c.logLike = true
	start, err := seconds("interval start", m[1])
	if err != nil {
		return err
	}
	if _, err := seconds("interval length", m[2]); err != nil {
		return err
	}
	if !decimal.MatchString(m[3]) {
		return fmt.Errorf("interval max %q is not a decimal number", m[3])
	}
	if prev, ok := c.prev[tag]; ok && start < prev {
		// hdrhistogram-go's reader stops at the first interval past the
		// end of a range it is asked for: it takes them in order.
		return fmt.Errorf("interval start %s s before the previous one's, %.3f s", m[1], prev)
	}
	c.prev[tag] = start
	return nil
}
