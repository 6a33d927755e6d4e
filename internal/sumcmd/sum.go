// Package sumcmd is `wirespeed sum`, a drop-in for coreutils md5sum,
// sha1sum, sha224sum, sha256sum, sha384sum and sha512sum (release 9.1): the
// same standard output byte for byte, the same exit status, and the same
// diagnostics on standard error except for the program name, which is
// "wirespeed sum" (the command that actually ran) instead of "md5sum".
// Files are hashed in parallel (-j) and reported in argument order;
// standard input, and a pipe, FIFO or device named again (/dev/stdin
// twice, or after -), are read in sequence, after what comes before them,
// as md5sum reads them, so that two names of one pipe do not share out
// its bytes.
package sumcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/getopt"
)

// Summary is the one-line description of the command.
const Summary = "print or check MD5/SHA checksums like md5sum, in parallel"

const sumProg = "wirespeed sum"

type sumConfig struct {
	alg           digest.Algorithm
	check         bool
	binary        int // -1 unset, 0 text (-t), 1 binary (-b, --tag)
	tag           bool
	zero          bool
	status        bool
	warn          bool
	quiet         bool
	strict        bool
	ignoreMissing bool
	jobs          int
	debug         bool
	files         []string
}

// Run runs `wirespeed sum` with the arguments after "sum". It prints its
// diagnostics itself, as coreutils does; a failure is a cli.StatusError with
// coreutils' exit status. The context is unused: like md5sum, sum runs to
// the end or until a signal ends the process.
func Run(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return run(args, stdin, stdout, stderr, systemTerminals())
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, term terminals) error {
	cfg, code, done := parseSumArgs(args, stdout, stderr)
	if !done {
		code = newSumRun(cfg, stdin, stdout, stderr, term).run()
	}
	if code != 0 {
		return cli.StatusError{Status: code}
	}
	return nil
}

// sumUsageError reports a command-line mistake the way coreutils does and
// returns its exit status (1).
func sumUsageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: %s\n", sumProg, fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "Try '%s --help' for more information.\n", sumProg)
	return 1
}

const sumHelp = `Usage: wirespeed sum [OPTION]... [FILE]...
Print or check MD5 or SHA checksums, like md5sum and sha*sum, hashing
files in parallel.

With no FILE, or when FILE is -, read standard input.

  -a, --algorithm=NAME  md5 (default), sha1, sha224, sha256, sha384, sha512
  -b, --binary          read in binary mode
  -c, --check           read checksums from the FILEs and check them
      --tag             create a BSD-style checksum
  -t, --text            read in text mode (default)
  -z, --zero            end each output line with NUL, not newline,
                          and disable file name escaping
  -j, --jobs=N          hash N files at once, or 16 per SIMD server on N
                          cores with multi-buffer MD5 (default: all cores)
      --debug           report on standard error how files were hashed

The following five options are useful only when verifying checksums:
      --ignore-missing  don't fail or report status for missing files
      --quiet           don't print OK for each successfully verified file
      --status          don't output anything, status code shows success
      --strict          exit non-zero for improperly formatted checksum lines
  -w, --warn            warn about improperly formatted checksum lines

  -h, --help            display this help and exit
      --version         output version information and exit

Output and exit status are those of GNU coreutils 9.1 md5sum/sha*sum;
diagnostics name the program "wirespeed sum". A progress line appears on
standard error when it is a terminal and a run takes more than a second.
`

// sumOptions are the options of `wirespeed sum`, md5sum's.
var sumOptions = []getopt.Option{
	{Name: "algorithm", HasArg: true, Short: 'a'},
	{Name: "binary", Short: 'b'},
	{Name: "check", Short: 'c'},
	{Name: "debug"},
	{Name: "help", Short: 'h'}, // not md5sum's: -h and -help are help, as in wirespeed's other commands
	{Name: "ignore-missing"},
	{Name: "jobs", HasArg: true, Short: 'j'},
	{Name: "quiet"},
	{Name: "status"},
	{Name: "strict"},
	{Name: "tag"},
	{Name: "text", Short: 't'},
	{Name: "version"},
	{Name: "warn", Short: 'w'},
	{Name: "zero", Short: 'z'},
}

// parseSumArgs parses arguments like GNU getopt_long: options and operands
// may mix, "--" ends options, long options may be abbreviated to a unique
// prefix. done is true when the command should exit with code right away.
func parseSumArgs(args []string, stdout, stderr io.Writer) (cfg sumConfig, code int, done bool) {
	cfg = sumConfig{alg: digest.MD5, binary: -1}
	apply := func(name string, arg string) (int, bool) {
		switch name {
		case "algorithm":
			a, err := digest.ParseAlgorithm(arg)
			if err != nil {
				return sumUsageError(stderr, "invalid argument %s for '--algorithm' (valid: md5, sha1, sha224, sha256, sha384, sha512)", quoteArg(arg)), true
			}
			cfg.alg = a
		case "binary":
			cfg.binary = 1
		case "check":
			cfg.check = true
		case "debug":
			cfg.debug = true
		case "help":
			_, err := io.WriteString(stdout, sumHelp)
			return writeErrorStatus(stderr, err), true
		case "ignore-missing":
			cfg.ignoreMissing = true
		case "jobs":
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 || n > 4096 {
				return sumUsageError(stderr, "invalid number of jobs: %s", quoteArg(arg)), true
			}
			cfg.jobs = n
		case "quiet":
			cfg.status, cfg.warn, cfg.quiet = false, false, true
		case "status":
			cfg.status, cfg.warn, cfg.quiet = true, false, false
		case "strict":
			cfg.strict = true
		case "tag":
			cfg.tag = true
			cfg.binary = 1
		case "text":
			cfg.binary = 0
		case "version":
			_, err := fmt.Fprintf(stdout, "%s (wirespeed) for GNU coreutils %s compatibility\n", sumProg, "9.1")
			return writeErrorStatus(stderr, err), true
		case "warn":
			cfg.status, cfg.warn, cfg.quiet = false, true, false
		case "zero":
			cfg.zero = true
		}
		return 0, false
	}
	given, files, err := getopt.Parse(sumOptions, args)
	// The options before a mistake count, as getopt_long's caller acts on
	// each before it reads the next: --help then a mistake prints the help.
	for _, g := range given {
		if c, stop := apply(g.Name, g.Value); stop {
			return cfg, c, true
		}
	}
	if err != nil {
		return cfg, sumUsageError(stderr, "%v", err), true
	}
	cfg.files = files
	// The same checks, in the same order, as coreutils.
	switch {
	case cfg.tag && cfg.binary == 0:
		return cfg, sumUsageError(stderr, "--tag does not support --text mode"), true
	case cfg.zero && cfg.check:
		return cfg, sumUsageError(stderr, "the --zero option is not supported when verifying checksums"), true
	case cfg.tag && cfg.check:
		return cfg, sumUsageError(stderr, "the --tag option is meaningless when verifying checksums"), true
	case cfg.binary >= 0 && cfg.check:
		return cfg, sumUsageError(stderr, "the --binary and --text options are meaningless when verifying checksums"), true
	case cfg.ignoreMissing && !cfg.check:
		return cfg, sumUsageError(stderr, "the --ignore-missing option is meaningful only when verifying checksums"), true
	case cfg.status && !cfg.check:
		return cfg, sumUsageError(stderr, "the --status option is meaningful only when verifying checksums"), true
	case cfg.warn && !cfg.check:
		return cfg, sumUsageError(stderr, "the --warn option is meaningful only when verifying checksums"), true
	case cfg.quiet && !cfg.check:
		return cfg, sumUsageError(stderr, "the --quiet option is meaningful only when verifying checksums"), true
	case cfg.strict && !cfg.check:
		return cfg, sumUsageError(stderr, "the --strict option is meaningful only when verifying checksums"), true
	}
	if len(cfg.files) == 0 {
		cfg.files = []string{"-"}
	}
	return cfg, 0, false
}

// writeErrorStatus reports a write error on standard output as md5sum 9.1
// does, and returns the exit status. md5sum flushes its output before it
// closes it, so a failed write is known from the stream's error flag and
// its cause is not told ("write error"), unless the close fails too, as
// on a closed descriptor ("write error: Bad file descriptor").
func writeErrorStatus(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return 0
	case isBadFD(err) || errors.Is(err, os.ErrClosed):
		fmt.Fprintf(stderr, "%s: write error: %s\n", sumProg, errText(err))
	default:
		fmt.Fprintf(stderr, "%s: write error\n", sumProg)
	}
	return 1
}

// quoteArg quotes an option argument in a diagnostic, as coreutils'
// quote() does in the C locale.
func quoteArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// An event is one thing to report, in input order: a file to hash (the
// only kind that goes through the parallel pool) or something that is
// handled in sequence (standard input, a malformed line, a summary).
type event struct {
	kind   eventKind
	name   string
	binary bool
	want   [2 * digest.MaxSize]byte // expected hex digest (check mode)
	nwant  int
	cf     *checkFile // the check file a line came from
	line   int        // its line number
	msg    string     // evMessage: a diagnostic
}

type eventKind uint8

const (
	evFile      eventKind = iota // hash name in the pool
	evStdin                      // hash standard input, in sequence
	evSerial                     // hash a file that is no regular file (a pipe, a device), in sequence
	evMessage                    // print msg on standard error
	evMalformed                  // an improperly formatted check line
	evSummary                    // end of a check file
	evReadError                  // a check file could not be read to the end
)

// maxQueued bounds the events waiting behind a file still being hashed.
const maxQueued = 4096

type sumRun struct {
	cfg    sumConfig
	stdin  io.Reader
	out    *bufio.Writer
	outTTY bool
	term   terminals
	errw   io.Writer
	utf8   bool

	mu        sync.Mutex
	drained   sync.Cond // signalled when the queue shrinks
	queue     []event   // events after the oldest unreported file
	head      int
	busy      bool // standard input or an evSerial file is being hashed, r.mu let go
	failed    bool
	lastFlush time.Time
	meter     *progressMeter
	// midLine: standard output is a terminal and its last byte was not
	// a newline, so no progress line may be drawn (see progressGuard).
	midLine bool

	progress   atomic.Int64
	filesDone  atomic.Int64
	multiFiles int
	bsdRev     int           // coreutils' bsd_reversed: -1 unknown, 0 standard, 1 reversed
	pipes      []os.FileInfo // the pipes, FIFOs and devices read so far (serial)
	// list is the pipe, FIFO or device the check list being read comes
	// from, or nil; listShared tells checkFileEvents that the event just
	// emitted reads it too (see serial). Both belong to the feeding
	// goroutine.
	list       os.FileInfo
	listShared bool
}

func newSumRun(cfg sumConfig, stdin io.Reader, stdout, stderr io.Writer, term terminals) *sumRun {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	r := &sumRun{cfg: cfg, stdin: stdin, errw: stderr, utf8: utf8Locale(), bsdRev: -1, term: term}
	r.out = bufio.NewWriterSize(progressGuard{r, stdout}, 64<<10)
	r.outTTY = term.is(stdout)
	r.drained.L = &r.mu
	return r
}

func (r *sumRun) run() int {
	if !r.cfg.status && r.term.is(r.errw) {
		r.meter = startProgress(r)
	}
	var events iter.Seq[event]
	if r.cfg.check {
		events = r.checkEvents
	} else {
		events = func(yield func(event) bool) {
			for _, f := range r.cfg.files {
				ev := event{kind: evFile, name: f, binary: r.cfg.binary == 1}
				if f == "-" {
					ev.kind = evStdin
				}
				if !yield(ev) {
					return
				}
			}
		}
	}
	paths := func(yield func(string) bool) {
		for ev := range events {
			if !r.emit(ev, yield) {
				return
			}
		}
	}
	opts := &digest.Options{Workers: r.cfg.jobs, Progress: &r.progress}
	err := digest.Each(context.Background(), r.cfg.alg, paths, opts, r.fileDone)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drain()
	if r.meter != nil {
		r.meter.stop()
	}
	if err != nil {
		r.diag("%v", err)
		r.failed = true
	}
	if r.cfg.debug {
		jobs := r.cfg.jobs
		if jobs == 0 {
			jobs = runtime.GOMAXPROCS(0)
		}
		r.diag("debug: %s, %d jobs, multi-buffer MD5 %q: %d of %d files", r.cfg.alg, jobs, digest.MultiBuffer(), r.multiFiles, r.filesDone.Load())
	}
	// The buffer keeps the first write error (flushes before this one
	// ignore theirs), so a failure at any point is reported here, once,
	// after everything else, as coreutils' close_stdout does at exit.
	if writeErrorStatus(r.errw, r.out.Flush()) != 0 {
		return 1
	}
	if r.failed {
		return 1
	}
	return 0
}

// emit queues ev behind the files still being hashed, or handles it at
// once when nothing is pending; files go on to the pool through yield.
func (r *sumRun) emit(ev event, yield func(string) bool) bool {
	if (ev.kind == evFile || ev.kind == evStdin) && r.serial(ev) {
		ev.kind = evSerial
	}
	r.mu.Lock()
	if ev.kind == evFile {
		r.queue = append(r.queue, ev)
		r.mu.Unlock()
		return yield(ev.name)
	}
	if r.head == len(r.queue) && !r.busy {
		r.handle(ev, nil)
	} else {
		r.queue = append(r.queue, ev)
		for len(r.queue)-r.head > maxQueued {
			r.drained.Wait()
		}
	}
	r.mu.Unlock()
	return true
}

// serial reports whether ev, a file or standard input, is to be hashed
// in sequence (evSerial), after the events before it, instead of in the
// pool: a name of a pipe, FIFO or device that an earlier name (or
// standard input) also reads. Two names of one pipe read at once would
// share out its bytes; md5sum reads the first to its end before it opens
// the second. Pipes named once (<(cmd1) <(cmd2)) are still read in
// parallel. It runs on the feeding goroutine, which alone uses r.pipes.
func (r *sumRun) serial(ev event) bool {
	var fi os.FileInfo
	var err error
	if ev.kind == evStdin {
		f, ok := r.stdin.(*os.File)
		if !ok {
			return false
		}
		fi, err = f.Stat()
	} else {
		fi, err = os.Stat(ev.name)
	}
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return false
	}
	if r.list != nil && os.SameFile(r.list, fi) {
		r.listShared = true
	}
	for _, p := range r.pipes {
		if os.SameFile(p, fi) {
			return ev.kind == evFile // standard input is read in sequence anyway
		}
	}
	r.pipes = append(r.pipes, fi)
	return false
}

// fileDone receives the pool's results in input order.
func (r *sumRun) fileDone(res digest.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.queue[r.head]
	r.pop()
	r.handle(ev, &res)
	if res.MultiBuffer {
		r.multiFiles++
	}
	r.filesDone.Add(1)
	for r.head < len(r.queue) && r.queue[r.head].kind != evFile {
		ev := r.queue[r.head]
		r.pop()
		r.handle(ev, nil)
	}
	r.drained.Broadcast()
	return nil
}

func (r *sumRun) pop() {
	r.queue[r.head] = event{}
	r.head++
	if r.head == len(r.queue) {
		r.queue, r.head = r.queue[:0], 0
	} else if r.head > 1024 && r.head*2 > len(r.queue) {
		n := copy(r.queue, r.queue[r.head:])
		r.queue, r.head = r.queue[:n], 0
	}
}

// drain handles what is left after the pool has finished.
func (r *sumRun) drain() {
	for r.head < len(r.queue) {
		ev := r.queue[r.head]
		r.pop()
		r.handle(ev, nil)
	}
}

// handle reports one event; res is the pool's result for evFile.
// r.mu is held.
func (r *sumRun) handle(ev event, res *digest.Result) {
	switch ev.kind {
	case evFile, evStdin, evSerial:
		var sum digest.Sum
		var err error
		if res != nil {
			sum, err = res.Sum, res.Err
		} else {
			sum, err = r.hashInSequence(ev)
		}
		if r.cfg.check {
			r.checked(ev, sum, err)
		} else {
			r.printed(ev, sum, err)
		}
	case evMessage:
		r.diag("%s", ev.msg)
		r.failed = true
	case evMalformed:
		ev.cf.misformatted++
		if r.cfg.warn {
			r.diag("%s: %d: improperly formatted %s checksum line", quoteName(ev.cf.displayName(), r.utf8), ev.line, r.cfg.alg.Tag())
		}
	case evSummary:
		r.summarize(ev.cf)
	case evReadError:
		r.diag("%s: read error", quoteName(ev.cf.displayName(), r.utf8))
		r.failed = true
	}
}

// hashInSequence hashes standard input or an evSerial file, which may
// take long (a pipe): r.mu is let go meanwhile, so that the progress line
// goes on, and r.busy keeps every other event (and a check list read
// from standard input) behind it. r.mu is held.
func (r *sumRun) hashInSequence(ev event) (digest.Sum, error) {
	r.busy = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.busy = false
		r.drained.Broadcast()
	}()
	if ev.kind == evStdin {
		sum, err := digest.Reader(r.cfg.alg, progressReader{r.stdin, &r.progress})
		if err != nil {
			err = &os.PathError{Op: "read", Path: ev.name, Err: err}
		}
		return sum, err
	}
	f, err := os.Open(ev.name)
	if err != nil {
		return digest.Sum{}, err
	}
	defer f.Close()
	return digest.Reader(r.cfg.alg, progressReader{f, &r.progress})
}

// A progressReader adds the size of every read to n.
type progressReader struct {
	r io.Reader
	n *atomic.Int64
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// printed writes one checksum line, or the file's error.
func (r *sumRun) printed(ev event, sum digest.Sum, err error) {
	if err != nil {
		r.fileError(ev.name, err)
		r.failed = true
		return
	}
	var line [2*digest.MaxSize + 64]byte
	b := line[:0]
	esc := !r.cfg.zero && needsEscape(ev.name)
	if esc {
		b = append(b, '\\')
	}
	if r.cfg.tag {
		b = append(b, r.cfg.alg.Tag()...)
		b = append(b, " ("...)
		b = r.appendName(b, ev.name, esc)
		b = append(b, ") = "...)
		b = sum.AppendHex(b)
	} else {
		b = sum.AppendHex(b)
		b = append(b, ' ')
		if ev.binary {
			b = append(b, '*')
		} else {
			b = append(b, ' ')
		}
		b = r.appendName(b, ev.name, esc)
	}
	if r.cfg.zero {
		b = append(b, 0)
	} else {
		b = append(b, '\n')
	}
	r.write(b)
}

func (r *sumRun) appendName(b []byte, name string, esc bool) []byte {
	if esc {
		return appendEscaped(b, name)
	}
	return append(b, name...)
}

// write puts a line on standard output, flushing when stdout is a
// terminal or output has waited a while. A write error stays in r.out,
// which fails every write after it, and run reports it at the end.
func (r *sumRun) write(b []byte) {
	r.out.Write(b)
	if now := time.Now(); r.outTTY || now.Sub(r.lastFlush) > 200*time.Millisecond {
		r.out.Flush()
		r.lastFlush = now
	}
}

// diag writes "wirespeed sum: MSG" on standard error, after flushing
// standard output so that the two streams interleave as coreutils' do.
func (r *sumRun) diag(format string, a ...any) {
	if r.meter != nil {
		r.meter.clear() // first, or progressGuard would draw it again
	}
	r.out.Flush()
	fmt.Fprintf(r.errw, "%s: %s\n", sumProg, fmt.Sprintf(format, a...))
	r.midLine = false // a shared terminal is at the start of a line again
}

func (r *sumRun) fileError(name string, err error) {
	r.diag("%s: %s", quoteName(name, r.utf8), errText(err))
}

// errText is strerror's wording for system errors ("No such file or
// directory"), and the error's own text otherwise.
func errText(err error) string {
	if s, ok := sysErrText(err); ok {
		if s != "" && 'a' <= s[0] && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	if errors.Is(err, os.ErrClosed) {
		return "Bad file descriptor" // an *os.File already closed: EBADF to C
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
