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
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-strftime"

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
	host   string
	now    func() time.Time
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
	target  string
	dropped atomic.Bool
	// open is set while the message's last line has no line end (BDAT
	// data need not end in CRLF): Close ends it before the empty line.
	open bool
}

// capture is smtpsink.Config.Capture.
func (d *dumper) capture(t smtpsink.Transaction) io.WriteCloser {
	now := d.now()
	name := strftime.Format(d.tmpl, now)
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.fail(err)
		return nil
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
		d.fail(err)
		return nil
	}
	id := fmt.Sprintf("%08x", rand.Uint32())
	if !d.append {
		name += id
	}
	w := &dump{d: d, session: t.Session, f: f, w: bufio.NewWriter(f), target: name}
	w.header(t, id, now)
	d.open.Store(t.Session, w)
	return w
}

// drop drops the dump under way in session, if any: its message is not
// taken.
func (d *dumper) drop(session uint64) {
	if w, ok := d.open.Load(session); ok {
		w.(*dump).dropped.Store(true)
	}
}

func (w *dump) header(t smtpsink.Transaction, id string, now time.Time) {
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
	if len(p) > 0 {
		w.open = p[len(p)-1] != '\n'
	}
	return w.w.Write(p)
}

// Close ends the transaction's dump: the empty line (after a line end
// for a last line without one), then the file
// takes its name (-d; one taken already is not replaced), or is appended
// to the shared one (-D).
func (w *dump) Close() error {
	if w.dropped.Load() {
		return w.CloseWithError(nil)
	}
	w.d.open.CompareAndDelete(w.session, w)
	if w.open {
		w.w.WriteString("\r\n")
	}
	w.w.WriteString("\r\n")
	err := errors.Join(w.w.Flush(), w.f.Close())
	if err == nil && w.d.append {
		err = w.d.appendTo(w.target, w.f.Name())
	} else if err == nil {
		err = os.Link(w.f.Name(), w.target)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			err = os.Rename(w.f.Name(), w.target) // no hard links here
		}
	}
	os.Remove(w.f.Name())
	if err != nil {
		w.d.fail(err)
	}
	return err
}

// CloseWithError drops the dump of a message that is not whole.
func (w *dump) CloseWithError(error) error {
	w.d.open.CompareAndDelete(w.session, w)
	w.f.Close()
	return os.Remove(w.f.Name())
}

// appendTo appends the file tmp to the file name.
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
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}

// fail counts and reports a dump that could not be written.
func (d *dumper) fail(err error) {
	d.errs.Add(1)
	d.logf("smtp-sink: dump: %v", err)
}
