package smtpsinkcmd

import (
	"errors"
	"io"
	"os"
)

// A sumLog is where -digest writes a line a message: standard
// output, or the -digest-log file. A line that fails part-way in a
// regular file is cut off again, as -D's append is, so that the log
// holds whole lines only, each of a message that was accepted.
type sumLog struct {
	w    io.Writer
	f    *os.File // the regular file under w, cut back after a failed write (nil: none)
	size int64    // f's length: its whole lines
}

// write writes line, one whole line or nothing of it where the log is a
// regular file.
func (l *sumLog) write(line []byte) error {
	n, err := l.w.Write(line)
	if err == nil {
		l.size += int64(n)
		return nil
	}
	if l.f != nil {
		// Cut the torn line, and write the next where it began: past
		// the end, a write would leave a hole of zeros.
		_, serr := l.f.Seek(l.size, io.SeekStart)
		err = errors.Join(err, l.f.Truncate(l.size), serr)
	}
	return err
}
