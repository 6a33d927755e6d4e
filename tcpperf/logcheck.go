package tcpperf

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// hdrhistogram-go's log reader takes the first run of digits and dots
// before a comma for each time of an interval line, wherever it starts,
// and the digits and dots after "StartTime: " or "BaseTime: " for a
// header's: so an interval start of 1e300 read as 300 s, 5e9 as 9 s, -5
// as 5 s, and a StartTime of 1e300 as 1 s, each with no error and a wrong
// span. A checkedLog reads a log on to that reader line by line and fails
// the read, naming the line, at one it would read so loosely, or drop
// though it starts as an interval (a length of 1e300), and at one whose
// times are out of bounds or out of order. It fails it too at an interval
// whose histogram hdrhistogram-go would refuse from its header, or would
// allocate more than maxHistCounts counts for (checkHist).
type checkedLog struct {
	r       *bufio.Reader
	line    int
	pending []byte
	buf     []byte // the line, kept from line to line
	err     error
	// The previous interval start of each tag ("" untagged) since the
	// last StartTime or BaseTime header (a log concatenated to another
	// starts again there).
	prev map[string]float64
	// logLike: a line of an interval log was read (a comment or header,
	// the legend, or an interval), so a log with no interval is one, not
	// some other file.
	logLike bool
	// checkHist's buffers, kept from line to line: the histogram as the
	// line carries it and base64-decoded, the compressed part's reader and
	// its decompressor.
	b64, raw []byte
	zsrc     bytes.Reader
	z        io.ReadCloser
	// The times as hdrhistogram-go's reader takes them (its StartTime
	// and BaseTime, seen or deduced), in seconds, and the last interval's
	// start and end in Unix milliseconds, rounded: the reader truncates
	// its sum of seconds times 1000, a float, so an interval from .735 s
	// ending 0.3 s later ended at .034 (the sum is .0349999...), and the
	// merge of a run's log was a millisecond short of the run's span.
	startSec, baseSec          float64
	seenStart, seenBase        bool
	intervalStart, intervalEnd int64
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
		line, long, err := c.readLine()
		if err != nil {
			c.err = err
		}
		if len(line) == 0 {
			continue
		}
		c.line++
		if long {
			c.err = fmt.Errorf("line %d: longer than %d bytes, more than any histogram of at most %d counts takes", c.line, maxLogLine, maxHistCounts)
			return 0, c.err
		}
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

// maxLogLine bounds a line of a log: an interval whose histogram has
// maxHistCounts counts, each as large as a varint gets (9 bytes), takes
// 12 MiB in base64 at most.
const maxLogLine = 16 << 20

// readLine reads the next line, with its '\n' if any, into c's buffer
// (pending, which holds the line before, is empty by then); of a line
// longer than maxLogLine, it returns the first maxLogLine bytes and long.
// The buffer doubles as it grows (append grows a large slice by a
// quarter, so a 16 MiB line would cost 80 MiB of copies).
func (c *checkedLog) readLine() (line []byte, long bool, err error) {
	line = c.buf[:0]
	defer func() { c.buf = line[:0] }()
	for {
		chunk, err := c.r.ReadSlice('\n')
		if room := maxLogLine - len(line); len(chunk) > room {
			chunk, long = chunk[:room], true
		}
		if need := len(line) + len(chunk); need > cap(line) {
			grown := make([]byte, len(line), min(max(2*cap(line), need), maxLogLine))
			copy(grown, line)
			line = grown
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull || long {
			if err == bufio.ErrBufferFull {
				err = nil
			}
			return line, long, err
		}
	}
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
		c.readerHeader(line)
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
	length, err := seconds("interval length", m[2])
	if err != nil {
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
	if err := c.checkHist(m[4]); err != nil {
		return err
	}
	c.prev[tag] = start
	c.intervalTimes(start, length)
	return nil
}

// The headers hdrhistogram-go's reader takes a time from: anywhere in a
// line that starts with '#'.
var (
	readerStartTime = regexp.MustCompile(`#\[StartTime: ([\d\.]*)`)
	readerBaseTime  = regexp.MustCompile(`#\[BaseTime: ([\d\.]*)`)
)

// readerHeader notes the StartTime or BaseTime that hdrhistogram-go's
// reader takes from line, as it does.
func (c *checkedLog) readerHeader(line string) {
	if !strings.HasPrefix(line, "#") {
		return
	}
	if m := readerStartTime.FindStringSubmatch(line); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			c.startSec, c.seenStart = v, true
		}
	} else if m := readerBaseTime.FindStringSubmatch(line); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			c.baseSec, c.seenBase = v, true
		}
	}
}

// intervalTimes sets the start and end of the interval line just checked,
// at start seconds for length seconds, in Unix milliseconds: where
// hdrhistogram-go's reader places it (with the StartTime and BaseTime it
// deduces where the log gives none), rounded to the millisecond, where
// the reader truncates.
func (c *checkedLog) intervalTimes(start, length float64) {
	if !c.seenStart {
		c.startSec, c.seenStart = start, true
	}
	if !c.seenBase {
		// As the reader: times more than a year before the StartTime
		// are relative to it, others absolute.
		c.baseSec = 0
		if start < c.startSec-365*24*3600 {
			c.baseSec = c.startSec
		}
		c.seenBase = true
	}
	abs := start + c.baseSec
	c.intervalStart = int64(math.Round(abs * 1e3))
	c.intervalEnd = int64(math.Round((abs + length) * 1e3))
}

// maxHistCounts bounds the counts of an interval's histogram: 2^20, 8 MiB
// of counts. hdrhistogram-go's Decode allocates a histogram's counts from
// the geometry its header declares (its lowest and highest trackable value
// and significant figures), whatever values it holds: 49 MB for 5 figures
// up to 2^62, in a line of a few dozen bytes. The bound admits our tools'
// histograms (latrec.NewHist: 1 ns to 1 h at 3 figures, 33792 counts) and
// every range HdrHistogram's writers are usually given, up to the whole
// int64 range at 3 figures (55296) or 4 (819200); at 5 only short ranges
// (1 to 2^24-1) fit.
const maxHistCounts = 1 << 20

// checkHist returns what is wrong with b64, an interval's histogram as the
// line carries it, that hdrhistogram-go's Decode would refuse or allocate
// more than maxHistCounts counts for. It reads what Decode reads before it
// allocates the counts: the base64, the 8 bytes of cookie and compressed
// length, and the first 40 bytes of the zlib-compressed rest, the header
// of the histogram (hdr_encoding.go). What is wrong past the header (a
// corrupt payload, a bad checksum) Decode finds.
func (c *checkedLog) checkHist(b64 string) error {
	c.b64 = append(c.b64[:0], b64...)
	c.raw = append(c.raw[:0], make([]byte, base64.StdEncoding.DecodedLen(len(c.b64)))...)
	n, err := base64.StdEncoding.Decode(c.raw, c.b64)
	if err != nil {
		return fmt.Errorf("histogram is not base64 (%v)", err)
	}
	raw := c.raw[:n]
	if len(raw) < 8 {
		return fmt.Errorf("histogram of %d bytes, short of its 8-byte header", len(raw))
	}
	if cookie := int32(binary.BigEndian.Uint32(raw)); cookie&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return fmt.Errorf("histogram cookie %#x is not a compressed V2 histogram's (%#x)", cookie, hdrhistogram.V2CompressedEncodingCookieBase)
	}
	clen := int32(binary.BigEndian.Uint32(raw[4:]))
	if clen < 0 || int64(clen) > int64(len(raw)-8) {
		return fmt.Errorf("histogram's compressed length %d is not within the %d bytes that follow it", clen, len(raw)-8)
	}
	c.zsrc.Reset(raw[8 : 8+clen])
	if c.z == nil {
		c.z, err = zlib.NewReader(&c.zsrc)
	} else {
		err = c.z.(zlib.Resetter).Reset(&c.zsrc, nil)
	}
	if err != nil {
		c.z = nil
		return fmt.Errorf("histogram is not zlib-compressed (%v)", err)
	}
	var hdr [hdrhistogram.ENCODING_HEADER_SIZE]byte
	if n, err := io.ReadFull(c.z, hdr[:]); err != nil {
		return fmt.Errorf("histogram's compressed header truncated or corrupt: %d of its %d bytes (%v)", n, len(hdr), err)
	}
	if cookie := int32(binary.BigEndian.Uint32(hdr[0:])); cookie&^0xf0 != hdrhistogram.V2EncodingCookieBase {
		return fmt.Errorf("histogram's inner cookie %#x is not a V2 histogram's (%#x)", cookie, hdrhistogram.V2EncodingCookieBase)
	}
	payload := int32(binary.BigEndian.Uint32(hdr[4:]))
	sig := int32(binary.BigEndian.Uint32(hdr[12:]))
	lowest := int64(binary.BigEndian.Uint64(hdr[16:]))
	highest := int64(binary.BigEndian.Uint64(hdr[24:]))
	counts, err := histCounts(lowest, highest, sig)
	if err != nil {
		return err
	}
	if counts > maxHistCounts {
		return fmt.Errorf("histogram of %d counts (%d to %d at %d significant figures), past the %d a line may hold", counts, lowest, highest, sig, maxHistCounts)
	}
	// At most a varint of 9 bytes a count, as Decode checks: its bound
	// on what it inflates.
	if payload < 0 || int64(payload) > 9*counts {
		return fmt.Errorf("histogram's payload length %d is not within 0 to %d (9 bytes for each of its %d counts)", payload, 9*counts, counts)
	}
	return nil
}

// histCounts returns the length of the counts array hdrhistogram-go's
// Decode allocates for a histogram whose header declares lowest, highest
// and sig significant figures, computed as hdr.go's wireGeometry and
// newExactGeometry compute it (a bucket of subBucketCount/2 counts for
// each doubling from subBucketCount<<unitMagnitude past highest, and
// one), or an error for the headers wireGeometry refuses.
func histCounts(lowest, highest int64, sig int32) (int64, error) {
	if sig < 0 || sig > 5 {
		return 0, fmt.Errorf("histogram of %d significant figures, not 0 to 5", sig)
	}
	lowest = max(lowest, 1) // as Decode reads hdrhistogram-go v1.0.0's 0
	largestSingleUnit := 2 * math.Pow10(int(sig))
	subBucketHalfCountMagnitude := max(int32(math.Ceil(math.Log2(largestSingleUnit))), 1) - 1
	unitMagnitude := max(int32(math.Floor(math.Log2(float64(lowest)))), 0)
	if unitMagnitude+subBucketHalfCountMagnitude > 61 {
		return 0, fmt.Errorf("histogram's lowest value %d is too large for %d significant figures", lowest, sig)
	}
	subBucketCount := int64(1) << (subBucketHalfCountMagnitude + 1)
	buckets := int64(1)
	for v := subBucketCount << unitMagnitude; v <= highest; v <<= 1 {
		buckets++
		if v > math.MaxInt64/2 {
			break // the last bucket reaches past MaxInt64
		}
	}
	return (buckets + 1) * (subBucketCount / 2), nil
}
