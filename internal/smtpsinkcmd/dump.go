package smtpsinkcmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-strftime"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// A dumper writes each message's transaction to a file, as Postfix
// smtp-sink's -d (a file a transaction: the template expanded by
// strftime, then a random hexadecimal number) and -D (appended to the
// file the template names) do, in its format: X-Client-Addr,
// X-Client-Proto, X-Helo-Args, X-Mail-Args, X-Rcpt-Args and Received
// lines, the message as received, and an empty line. Unlike Postfix's,
// lines end in CRLF, as the message's own do: its bytes are dumped
// exactly. A transaction is written to a temporary file beside its
// target, which takes its name (-d) or is appended to it (-D) when the
// message's data has ended: one who watches the directory never reads
// half a message, and a message cut short leaves nothing, as in
// Postfix's; nor does one whose data was refused (too large, a bare CR
// or LF, a line too long), or that drop names.
type dumper struct {
	tmpl   string
	append bool
	flag   string // -d or -D
	start  string // -S: written before each transaction
	host   string
	now    func() time.Time
	newID  func() string // a dump's id; randomID but in tests
	logf   func(format string, args ...any)

	mu   sync.Mutex // -D: one transaction appended at a time
	errs atomic.Uint64

	open sync.Map // session id -> its *dump under way
}

// dump is one transaction's temporary file, and its target.
type dump struct {
	d       *dumper
	session uint64
	f       *os.File
	w       *bufio.Writer
	target  string // -d: without its id
	id      string
	dropped atomic.Bool
	done    bool  // commit has run
	err     error // commit's error
	// open is set while the message's last line has no line end (BDAT
	// data need not end in CRLF): Close ends it before the empty line.
	open bool
}

// randomID returns a dump's id, a random hexadecimal number.
func randomID() string { return fmt.Sprintf("%08x", rand.Uint32()) }

// checkUsage refuses a template that names no file for -D.
func (d *dumper) checkUsage() error {
	name := strftime.Format(d.tmpl, d.now())
	if d.append && (strings.HasSuffix(name, "/") || strings.HasSuffix(name, string(filepath.Separator))) {
		return fmt.Errorf("-D %s: names a directory, not a file", d.tmpl)
	}
	return nil
}

// check tries the template at start, as the first message would use it:
// its directory made, a file created in it, the name (-d: with an id)
// not too long, the file (-D) one that can be appended to. What it made
// for that, directories and files, it removes again.
func (d *dumper) check() error {
	name := strftime.Format(d.tmpl, d.now())
	if fi, err := os.Stat(name); d.append && err == nil && fi.IsDir() {
		return cli.Usagef("-D %s: names a directory, not a file", d.tmpl)
	}
	dir := filepath.Dir(name)
	undo, err := mkdirAll(dir)
	defer undo() // after the probe's files go
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".smtp-sink-dump-*")
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(f.Name())
	if d.append {
		_, err := os.Lstat(name)
		made := errors.Is(err, fs.ErrNotExist)
		g, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		g.Close()
		if made {
			os.Remove(name)
		}
		return nil
	}
	// A hidden name as long as a dump's: too long fails here, not at
	// each message.
	base := filepath.Base(name + d.newID())
	probe := filepath.Join(dir, "."+strings.Repeat("x", len(base)-1))
	if err := os.Link(f.Name(), probe); err != nil && !errors.Is(err, fs.ErrExist) {
		if err := os.Rename(f.Name(), probe); err != nil {
			var le *os.LinkError
			if errors.As(err, &le) {
				err = &fs.PathError{Op: "create", Path: name + "<id>", Err: le.Err}
			}
			return err
		}
	}
	os.Remove(probe)
	return nil
}

// mkdirAll makes dir and its missing parents, as os.MkdirAll, and
// returns a function that removes again those it made, deepest first,
// where they are empty: the start-up probe leaves no directory behind (a
// template's %s or %Q names one no message would use).
func mkdirAll(dir string) (undo func(), err error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	err = os.MkdirAll(dir, 0o755)
	return func() {
		for _, d := range made {
			os.Remove(d)
		}
	}, err
}

// capture is smtpsink.Config.Capture. A dump that cannot be started is
// a writer that fails at Close: its message is refused (451), not
// taken without its dump.
func (d *dumper) capture(t smtpsink.Transaction) io.WriteCloser {
	now := t.Mail // named and dated at MAIL, as Postfix's
	if now.IsZero() {
		now = d.now()
	}
	name := strftime.Format(d.tmpl, now)
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d.failed(t.Session, err)
	}
	f, err := os.CreateTemp(dir, ".smtp-sink-dump-*")
	if err == nil {
		err = f.Chmod(0o644) // as Postfix's, where CreateTemp makes 0600
	}
	if err != nil {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
		return d.failed(t.Session, err)
	}
	id := d.newID()
	w := &dump{d: d, session: t.Session, f: f, w: bufio.NewWriter(f), target: name, id: id}
	w.header(t, id, now)
	d.open.Store(t.Session, w)
	return w
}

// failed counts and reports err, a dump that could not be started, and
// returns its writer, which fails at Close.
func (d *dumper) failed(session uint64, err error) io.WriteCloser {
	d.fail(err)
	w := &dump{d: d, session: session, done: true, err: err}
	d.open.Store(session, w)
	return w
}

// commit commits the dump under way in session, if any, and returns its
// error (see dump.commit).
func (d *dumper) commit(session uint64) error {
	if w, ok := d.open.Load(session); ok {
		return w.(*dump).commit()
	}
	return nil
}

// drop drops the dump under way in session, if any: its message is not
// taken.
func (d *dumper) drop(session uint64) {
	if w, ok := d.open.Load(session); ok {
		w.(*dump).dropped.Store(true)
	}
}

func (w *dump) header(t smtpsink.Transaction, id string, now time.Time) {
	w.w.WriteString(w.d.start)
	addr := ""
	if t.RemoteAddr != nil && t.RemoteAddr.Network() == "unix" {
		addr = "local" // as Postfix's smtp-sink writes a Unix socket's client
	} else if t.RemoteAddr != nil {
		host, _, err := net.SplitHostPort(t.RemoteAddr.String())
		if err != nil {
			host = t.RemoteAddr.String()
		}
		addr = host
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			addr = "ipv6:" + host
		}
	}
	fmt.Fprintf(w.w, "X-Client-Addr: %s\r\nX-Client-Proto: %s\r\n", addr, t.Proto)
	if t.Helo != "" {
		fmt.Fprintf(w.w, "X-Helo-Args: %s\r\n", t.Helo)
	}
	fmt.Fprintf(w.w, "X-Mail-Args: %s\r\n", t.MailArgs)
	for _, r := range t.RcptArgs {
		fmt.Fprintf(w.w, "X-Rcpt-Args: %s\r\n", r)
	}
	from := t.Helo
	if from == "" {
		from = "[" + addr + "]" // as Postfix's smtp-sink writes it
	}
	fmt.Fprintf(w.w, "Received: from %s ([%s])\r\n\tby %s (smtp-sink) with %s id %s;\r\n\t%s\r\n",
		from, addr, w.d.host, t.Proto, id, now.Format("Mon, _2 Jan 2006 15:04:05 -0700 (MST)")) // Postfix's mail_date: %e, a space before a day under 10
}

func (w *dump) Write(p []byte) (int, error) {
	if w.f == nil {
		return len(p), nil // failed at its start
	}
	if len(p) > 0 {
		w.open = p[len(p)-1] != '\n'
	}
	return w.w.Write(p)
}

// Close ends the transaction's dump (commit), or drops it if its
// message was refused.
func (w *dump) Close() error {
	if w.dropped.Load() {
		return w.CloseWithError(nil)
	}
	return w.commit()
}

// commit ends the transaction's dump, once: the empty line (after a
// line end for a last line without one), then the file takes its name
// (-d; where a file has it already, the name of another id) or is
// appended to the shared one (-D). Its error is counted and reported.
func (w *dump) commit() error {
	w.d.open.CompareAndDelete(w.session, w)
	if w.done {
		return w.err
	}
	w.done = true
	if w.open {
		w.w.WriteString("\r\n")
	}
	w.w.WriteString("\r\n")
	err := errors.Join(w.w.Flush(), w.f.Close())
	if err == nil && w.d.append {
		err = w.d.appendTo(w.target, w.f.Name())
	} else if err == nil {
		err = w.link()
	}
	os.Remove(w.f.Name())
	if err != nil {
		w.d.fail(err)
	}
	w.err = err
	return err
}

// link gives the temporary file its name, the target and the id, or
// where that is taken (two messages of one second with the same random
// id, or a file from an earlier run), the target and another id: a dump
// never replaces another.
func (w *dump) link() error {
	id := w.id
	for range 100 {
		err := os.Link(w.f.Name(), w.target+id)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// No hard links here: a rename, which would replace a file.
			if _, serr := os.Lstat(w.target + id); errors.Is(serr, fs.ErrNotExist) {
				err = os.Rename(w.f.Name(), w.target+id)
			}
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		id = w.d.newID()
	}
	return &fs.PathError{Op: "link", Path: w.target + id, Err: fs.ErrExist}
}

// CloseWithError drops the dump of a message that is not whole.
func (w *dump) CloseWithError(error) error {
	w.d.open.CompareAndDelete(w.session, w)
	if w.f == nil {
		return nil
	}
	w.f.Close()
	return os.Remove(w.f.Name())
}

// appendTo appends the file tmp to the file name; an append that fails
// (a full file system) is cut off again, so the file holds whole
// transactions only.
func (d *dumper) appendTo(name, tmp string) error {
	src, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	dst, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fi, err := dst.Stat()
	if err == nil {
		_, err = io.Copy(dst, src)
		if err != nil {
			dst.Truncate(fi.Size())
		}
	}
	return errors.Join(err, dst.Close())
}

// fail counts and reports a dump that could not be written.
func (d *dumper) fail(err error) {
	d.errs.Add(1)
	d.logf("smtp-sink: dump: %v", err)
}
