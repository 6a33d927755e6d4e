package sumcmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// A progressMeter redraws one status line on standard error (only when
// it is a terminal) for runs longer than a second: files done, bytes
// hashed and the rate. Diagnostics clear it first, and so does every
// write to standard output (progressGuard), which may share the terminal.
type progressMeter struct {
	r     *sumRun
	w     io.Writer
	start time.Time
	delay time.Duration // nothing is drawn before the run is this old
	tick  time.Duration // redraw interval
	shown bool          // guarded by r.mu
	done  chan struct{}
}

// terminals says which of Run's streams are terminals, and how the
// progress line is timed there. The tests fake them (export_test.go).
type terminals struct {
	is          func(w any) bool
	delay, tick time.Duration // the meter's start and its redraws
}

// systemTerminals are the terminals of the system: the *os.Files that
// are one, and a meter from the run's second second, 4 times a second.
func systemTerminals() terminals {
	return terminals{is: isTerminal, delay: time.Second, tick: 250 * time.Millisecond}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func startProgress(r *sumRun) *progressMeter {
	m := &progressMeter{r: r, w: r.errw, start: time.Now(), delay: r.term.delay, tick: r.term.tick, done: make(chan struct{})}
	go m.loop()
	return m
}

func (m *progressMeter) loop() {
	t := time.NewTicker(m.tick)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case now := <-t.C:
			if now.Sub(m.start) < m.delay {
				continue
			}
			m.r.mu.Lock()
			select {
			case <-m.done:
				m.r.mu.Unlock()
				return
			default:
			}
			if !m.r.midLine {
				m.draw(now)
			}
			m.r.mu.Unlock()
		}
	}
}

// draw writes the status line; r.mu is held.
func (m *progressMeter) draw(now time.Time) {
	n := m.r.progress.Load()
	files := m.r.filesDone.Load()
	secs := now.Sub(m.start).Seconds()
	of := ""
	if !m.r.cfg.check {
		of = fmt.Sprintf("/%d", len(m.r.cfg.files))
	}
	fmt.Fprintf(m.w, "\r%s: %d%s files, %s, %s/s\x1b[K", sumProg, files, of, humanBytes(float64(n)), humanBytes(float64(n)/secs))
	m.shown = true
}

// clear erases the status line; r.mu is held.
func (m *progressMeter) clear() {
	if m.shown {
		io.WriteString(m.w, "\r\x1b[K")
		m.shown = false
	}
}

// stop ends the meter and erases its line; r.mu is held.
func (m *progressMeter) stop() {
	close(m.done)
	m.clear()
}

// A progressGuard is standard output as sumRun's buffer writes to it: it
// erases a progress line that is showing before any byte goes out, so
// that standard output never continues the progress text when both
// streams go to one terminal, and draws it again below what was written.
// It is only written to with r.mu held (sumRun.out is used under it).
type progressGuard struct {
	r *sumRun
	w io.Writer
}

func (g progressGuard) Write(p []byte) (int, error) {
	r := g.r
	m := r.meter
	shown := m != nil && m.shown
	if shown {
		m.clear()
	}
	n, err := g.w.Write(p)
	if r.outTTY && n > 0 {
		// A line cut short (-z, or a partial write) is on the
		// terminal: a progress line drawn now would overwrite it.
		r.midLine = p[n-1] != '\n'
	}
	if shown && !r.midLine {
		m.draw(time.Now())
	}
	return n, err
}

func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
