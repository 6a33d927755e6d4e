package bench

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The modes of the TLS ceiling's byte pipe.
var tlsPipeModes = []string{"plain", "tls", "tls-batched"}

// An smtpTLSCeiling bounds the 1 MiB STARTTLS bar from crypto/tls's side:
// the same bytes as the 1 MiB rows (-s connections, -m1m buffers of 1 MiB,
// written as smtp-source writes a message, each answered with a byte as smtp-sink answers a
// message, read into smtp-sink's 64 KiB buffer), pinned the same,
// with no SMTP: in the clear, over crypto/tls as it comes (a record a
// write), and with the records three to a write as smtp-source sends
// them. The SMTP pair's ratio cannot beat Ratio (or BatchedRatio) by much:
// the pair does that work and more.
type smtpTLSCeiling struct {
	Sessions     int                 `json:"sessions"`
	MiB          int                 `json:"mib"` // per run
	Runs         int                 `json:"runs"`
	Modes        []smtpTLSCeilingRow `json:"modes"`
	Ratio        float64             `json:"tls_over_plain"`
	BatchedRatio float64             `json:"tls_batched_over_plain"`
	// AES-128-GCM alone (the suite the pair agrees on) on one core, 16 KiB
	// records, in 10^6 bytes/s; and the bound they put on the SMTP pair's
	// ratio: each side over TLS does at least its plain work (its CPU per
	// message in the plain 1 MiB row) plus sealing or opening 1 MiB, so
	// the TLS pair takes at least that long a message, and its ratio to the
	// plain pair's time a message is at most SourceBound (SinkBound).
	SealMBPerS  float64 `json:"aes_gcm_seal_mb_per_s"`
	OpenMBPerS  float64 `json:"aes_gcm_open_mb_per_s"`
	SourceBound float64 `json:"source_bound,omitempty"`
	SinkBound   float64 `json:"sink_bound,omitempty"`
	Err         string  `json:"error,omitempty"`
}

// MarshalJSON writes the ceiling, a failed one (Err) as its load and
// error alone: its ratios, rates and bounds read 0 beside the error, as if
// measured.
func (c smtpTLSCeiling) MarshalJSON() ([]byte, error) {
	type ceiling smtpTLSCeiling // without this method
	if c.Err == "" {
		return json.Marshal(ceiling(c))
	}
	return failedJSON(c, "sessions", "mib", "error")
}

// An smtpTLSCeilingRow is one mode's median run, by MB/s.
type smtpTLSCeilingRow struct {
	Mode        string  `json:"mode"`
	MBPerS      float64 `json:"mb_per_s"` // 10^6 bytes over the writer process's wall time
	ReaderCPUUS float64 `json:"reader_cpu_us_per_mib"`
	WriterCPUUS float64 `json:"writer_cpu_us_per_mib"`
	Cipher      string  `json:"tls_cipher,omitempty"`
}

type tlsPipeRun struct {
	wall, readerCPU, writerCPU time.Duration
	cipher                     string
}

// smtpTLSCeilingRuns runs the modes in turn, cfg.count times each.
func smtpTLSCeilingRuns(ctx context.Context, cfg smtpConfig, mib int, progress io.Writer) *smtpTLSCeiling {
	c := &smtpTLSCeiling{Sessions: cfg.sessions, MiB: mib, Runs: cfg.count}
	runs := map[string][]tlsPipeRun{}
	for rep := 0; rep < cfg.count && ctx.Err() == nil; rep++ {
		for _, mode := range tlsPipeModes {
			fmt.Fprintf(progress, "TLS ceiling [%d/%d]: %s byte pipe, no SMTP\n", rep+1, cfg.count, mode)
			run, err := runTLSPipe(ctx, cfg, mode, mib)
			if err != nil && ctx.Err() != nil {
				err = errSMTPInterrupted // its processes were killed
			}
			if err != nil {
				c.Err = fmt.Sprintf("%s: %v", mode, err)
				return c
			}
			runs[mode] = append(runs[mode], run)
		}
	}
	if ctx.Err() != nil {
		// Interrupted between runs: the medians would be of fewer runs
		// than Runs says.
		c.Err = errSMTPInterrupted.Error()
		return c
	}
	mb := map[string]float64{}
	for _, mode := range tlsPipeModes {
		rs := runs[mode]
		if len(rs) == 0 {
			c.Err = "not run"
			return c
		}
		slices.SortFunc(rs, func(a, b tlsPipeRun) int { return int(a.wall - b.wall) })
		med := rs[len(rs)/2]
		row := smtpTLSCeilingRow{Mode: mode, MBPerS: float64(mib) * (1 << 20) / med.wall.Seconds() / 1e6,
			ReaderCPUUS: med.readerCPU.Seconds() * 1e6 / float64(mib), WriterCPUUS: med.writerCPU.Seconds() * 1e6 / float64(mib), Cipher: med.cipher}
		mb[mode] = row.MBPerS
		c.Modes = append(c.Modes, row)
	}
	c.Ratio, c.BatchedRatio = mb["tls"]/mb["plain"], mb["tls-batched"]/mb["plain"]
	c.SealMBPerS, c.OpenMBPerS = aesGCMRates()
	return c
}

// bound fills in the bounds from the plain 1 MiB row of wirespeed's pair.
func (c *smtpTLSCeiling) bound(rows []smtpRow) {
	for _, r := range rows {
		if r.Size != "1MiB" || r.Sink != engWirespeed || r.Source != engWirespeed || r.Err != "" || r.MsgPerS <= 0 || c.SealMBPerS <= 0 {
			continue
		}
		wall := 1e6 / r.MsgPerS // µs a message
		mb := float64(r.Length) / 1e6
		c.SourceBound = wall / (r.SourceCPUPerMsgUS + mb/c.SealMBPerS*1e6)
		c.SinkBound = wall / (r.ServerCPUPerMsgUS + mb/c.OpenMBPerS*1e6)
	}
}

// aesGCMRates seals and opens 16 KiB records with AES-128-GCM for about
// 200 ms each and returns the rates in 10^6 bytes/s.
func aesGCMRates() (seal, open float64) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		return 0, 0
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return 0, 0
	}
	nonce := make([]byte, aead.NonceSize())
	rec := make([]byte, 16<<10)
	sealed := aead.Seal(nil, nonce, rec, nil)
	out := make([]byte, 0, len(sealed))
	rate := func(f func()) float64 {
		n, t0 := 0, time.Now()
		for time.Since(t0) < 200*time.Millisecond {
			for range 64 {
				f()
			}
			n += 64
		}
		return float64(n*len(rec)) / time.Since(t0).Seconds() / 1e6
	}
	seal = rate(func() { out = aead.Seal(out[:0], nonce, rec, nil) })
	open = rate(func() { out, _ = aead.Open(out[:0], nonce, sealed, nil) })
	return seal, open
}

// runTLSPipe runs one reader (on the sink's CPU) and one writer (on the
// source's) of `wirespeed bench tlspipe`.
func runTLSPipe(ctx context.Context, cfg smtpConfig, mode string, mib int) (tlsPipeRun, error) {
	var run tlsPipeRun
	ra := []string{"bench", "tlspipe", "-listen", "127.0.0.1:0", "-s", strconv.Itoa(cfg.sessions), "-l", strconv.Itoa(1 << 20)}
	wa := []string{"bench", "tlspipe", "-s", strconv.Itoa(cfg.sessions), "-m", strconv.Itoa(mib), "-l", strconv.Itoa(1 << 20)}
	if mode != "plain" {
		ra, wa = append(ra, "-tls"), append(wa, "-tls")
	}
	if mode == "tls-batched" {
		wa = append(wa, "-batch")
	}
	out := newLineWriter()
	rd := exec.CommandContext(ctx, cfg.exe, ra...)
	var rdErr bytes.Buffer
	if err := out.pipe(rd, cfg.serverCPU, &rdErr); err != nil {
		return run, err
	}
	defer func() {
		if rd.ProcessState == nil {
			rd.Process.Kill()
			rd.Wait()
		}
	}()
	var addr string
	select {
	case line := <-out.first:
		var ok bool
		if addr, ok = strings.CutPrefix(line, "listening on "); !ok {
			return run, fmt.Errorf("reader: first line %q", line)
		}
	case <-out.eof:
		err := rd.Wait()
		return run, fmt.Errorf("reader exited before it listened: %v: %s", err, strings.TrimSpace(rdErr.String()+out.all()))
	case <-time.After(20 * time.Second):
		rd.Process.Kill()
		rd.Wait() // rdErr is written no more
		return run, fmt.Errorf("reader not listening within 20s: %s", strings.TrimSpace(rdErr.String()))
	}
	wr := exec.CommandContext(ctx, cfg.exe, append(wa, "-connect", addr)...)
	var wrOut, wrErr bytes.Buffer
	wr.Stdout, wr.Stderr = &wrOut, &wrErr
	t0 := time.Now()
	if err := startPinned(wr, cfg.clientCPU); err != nil {
		return run, err
	}
	werr := wr.Wait()
	run.wall = time.Since(t0)
	if werr != nil {
		return run, fmt.Errorf("writer: %v: %s", werr, strings.TrimSpace(wrErr.String()))
	}
	if err := rd.Wait(); err != nil {
		return run, fmt.Errorf("reader: %v: %s", err, strings.TrimSpace(rdErr.String()))
	}
	var wres, rres tlsPipeResult
	if err := json.Unmarshal(wrOut.Bytes(), &wres); err != nil {
		return run, fmt.Errorf("writer: %v", err)
	}
	<-out.eof // the reader's output is all read
	if err := json.Unmarshal(out.rest(), &rres); err != nil {
		return run, fmt.Errorf("reader: %v", err)
	}
	if want := int64(mib) << 20; wres.Bytes != want || rres.Bytes != want {
		return run, fmt.Errorf("wrote %d bytes, read %d, not %d", wres.Bytes, rres.Bytes, want)
	}
	run.writerCPU, _ = serverUsage(wr)
	run.readerCPU, _ = serverUsage(rd)
	run.cipher = wres.Cipher
	return run, nil
}

func printTLSCeiling(w io.Writer, c *smtpTLSCeiling) error {
	fmt.Fprintf(w, "\nthe 1 MiB TLS bar's ceiling: the same bytes with no SMTP (`bench tlspipe`: %d connections, %d MiB a run, 1 MiB a message written as smtp-source writes it and answered, 64 KiB reads), median of %d run(s):\n", c.Sessions, c.MiB, c.Runs)
	if c.Err != "" {
		_, err := fmt.Fprintln(w, c.Err)
		return err
	}
	for _, m := range c.Modes {
		fmt.Fprintf(w, "  %-12s %8.1f MB/s  reader CPU %5.0f µs/MiB  writer CPU %5.0f µs/MiB  %s\n", m.Mode, m.MBPerS, m.ReaderCPUUS, m.WriterCPUUS, m.Cipher)
	}
	fmt.Fprintf(w, "  crypto/tls / plain: %.2fx (records three to a write, as smtp-source sends them: %.2fx)\n", c.Ratio, c.BatchedRatio)
	fmt.Fprintf(w, "  AES-128-GCM alone, one core: seal %.0f MB/s, open %.0f MB/s", c.SealMBPerS, c.OpenMBPerS)
	if c.SourceBound > 0 {
		fmt.Fprintf(w, "; with the plain 1 MiB row's CPU a message, the TLS pair's ratio is at most %.2fx (source) and %.2fx (sink)", c.SourceBound, c.SinkBound)
	}
	_, err := fmt.Fprintln(w)
	return err
}
