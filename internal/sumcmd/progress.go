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
// hashed and the rate. Other diagnostics clear it first.
type progressMeter struct {
	r     *sumRun
	w     io.Writer
	start time.Time
	shown bool // guarded by r.mu
	done  chan struct{}
}

func termCheck(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func startProgress(r *sumRun) *progressMeter {
	m := &progressMeter{r: r, w: r.errw, start: time.Now(), done: make(chan struct{})}
	go m.loop()
	return m
}

func (m *progressMeter) loop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case now := <-t.C:
			if now.Sub(m.start) < time.Second {
				continue
			}
			m.r.mu.Lock()
			select {
			case <-m.done:
				m.r.mu.Unlock()
				return
			default:
			}
			m.draw(now)
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

func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
