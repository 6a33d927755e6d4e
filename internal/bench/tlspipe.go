package bench

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tlsbatch"
	"github.com/wirespeed/wirespeed/smtpsink"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// A tlsPipeResult is what each side of `wirespeed bench tlspipe` prints.
type tlsPipeResult struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"` // the writer's: from its first dial to the reader's close
	Version string  `json:"tls_version,omitempty"`
	Cipher  string  `json:"tls_cipher,omitempty"`
}

// maxReadBuf bounds tlspipe's -read-buf, allocated once a connection:
// smtp-sink reads through 64 KiB, and a buffer past a few MiB is no
// longer filled by one read of a loopback socket.
const maxReadBuf = 16 << 20

// RunTLSPipe runs `wirespeed bench tlspipe`: the byte moving of the smtp
// pair without SMTP, in the clear or over crypto/tls, to show what TLS
// alone costs. With -connect it opens -s connections and writes -m
// buffers of -l bytes over them, written as smtp-source writes a
// message, and after each waits for the reader's one-byte answer, as
// smtp-source waits for the end-of-data reply; with -listen it reads -s
// connections to their end into a buffer of smtp-sink's size, answers
// each -l bytes, and prints the bytes read.
func RunTLSPipe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return parseAndRun(ctx, parseTLSPipe, args, stdout, stderr)
}

// parseTLSPipe parses the arguments of `wirespeed bench tlspipe` and
// returns the run they ask for.
func parseTLSPipe(args []string, stdout, stderr io.Writer) (func(context.Context) error, error) {
	fs := flag.NewFlagSet("bench tlspipe", flag.ContinueOnError)
	listen := fs.String("listen", "", "read: listen on this address (port 0: any), print \"listening on ADDR\"")
	connect := fs.String("connect", "", "write: connect to this address")
	useTLS := fs.Bool("tls", false, "over TLS (the reader with a self-signed certificate, the writer not verifying it)")
	batch := fs.Bool("batch", false, "write: send the records three to a write, as smtp-source does (internal/tlsbatch); otherwise one a write, as crypto/tls does")
	sessions := fs.Int("s", 10, "connections")
	messages := fs.Int("m", 300, "write: buffers in all")
	length := fs.Int("l", 1<<20, "bytes a buffer, each answered with one byte")
	readBuf := fs.Int("read-buf", 64<<10, "read: the read buffer's bytes (smtp-sink's)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: wirespeed bench tlspipe -listen ADDR [flags]")
		fmt.Fprintln(w, "       wirespeed bench tlspipe -connect ADDR [flags]")
		fmt.Fprintln(w, "-listen and -connect are the pipe's two ends, each run as a process of its own: start the reader")
		fmt.Fprintln(w, "(-listen), which prints \"listening on ADDR\", then the writer (-connect ADDR) with the same -s, -l and -tls;")
		fmt.Fprintln(w, "each prints the bytes it moved as JSON, the writer its seconds too.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, err
	}
	if err := noArgs("tlspipe", fs.Args()); err != nil {
		return nil, err
	}
	// Each flag is named with what is wrong with it; a -l or -read-buf
	// of terabytes was taken, and the buffer's allocation ended the
	// process (out of memory).
	switch {
	case (*listen == "") == (*connect == ""):
		return nil, cli.Usagef("bench tlspipe: give one of -listen and -connect")
	case *sessions < 1 || *sessions > smtpsource.MaxSessions:
		// A goroutine and a buffer of -l (writer) or -read-buf (reader)
		// a connection: bounded as smtp-source's -s.
		return nil, cli.Usagef("bench tlspipe: -s %d: want 1 to %d", *sessions, smtpsource.MaxSessions)
	case *messages < 0:
		return nil, cli.Usagef("bench tlspipe: -m %d: want 0 or more", *messages)
	case *length < 1 || *length > smtpsource.MaxLength:
		return nil, cli.Usagef("bench tlspipe: -l %d: want 1 to %d bytes (1 GiB, smtp-source's -l at most)", *length, smtpsource.MaxLength)
	case *readBuf < 1 || *readBuf > maxReadBuf:
		return nil, cli.Usagef("bench tlspipe: -read-buf %d: want 1 to %d bytes (16 MiB)", *readBuf, maxReadBuf)
	}
	if *listen != "" {
		return func(ctx context.Context) error {
			return tlsPipeRead(ctx, *listen, *useTLS, *sessions, *length, *readBuf, stdout)
		}, nil
	}
	return func(ctx context.Context) error {
		return tlsPipeWrite(ctx, *connect, *useTLS, *batch, *sessions, *messages, *length, stdout)
	}, nil
}

func tlsPipeRead(ctx context.Context, addr string, useTLS bool, sessions, length, bufSize int, stdout io.Writer) error {
	var conf *tls.Config
	if useTLS {
		cert, err := smtpsink.SelfSigned("localhost", "127.0.0.1")
		if err != nil {
			return err
		}
		conf = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// Named, with the rule of serve's -addr and smtp-sink's.
		return fmt.Errorf("bench tlspipe: %w", cli.ListenError("-listen", addr, err))
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	var (
		total    atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range sessions {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			stopc := context.AfterFunc(ctx, func() { c.Close() })
			defer stopc()
			var rw io.ReadWriter = c
			if conf != nil {
				rw = tls.Server(c, conf)
			}
			buf := make([]byte, bufSize)
			left := length // of the buffer being read
			for {
				n, err := rw.Read(buf)
				total.Add(int64(n))
				for n > 0 && err == nil {
					k := min(n, left)
					n -= k
					if left -= k; left == 0 {
						_, err = rw.Write([]byte{'.'})
						left = length
					}
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						mu.Lock()
						firstErr = cmp.Or(firstErr, err)
						mu.Unlock()
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return json.NewEncoder(stdout).Encode(tlsPipeResult{Bytes: total.Load()})
}

func tlsPipeWrite(ctx context.Context, addr string, useTLS, batch bool, sessions, messages, length int, stdout io.Writer) error {
	buf := bytes.Repeat([]byte("X"), length) // smtp-source's pattern body is mostly X's; the cipher does not care
	var (
		res   tlsPipeResult
		total atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	start := time.Now()
	for i := range sessions {
		n := messages / sessions
		if i < messages%sessions {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			version, cipher, err := tlsPipeConn(ctx, addr, useTLS, batch, buf, n, &total)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, err)
			}
			if version != "" {
				res.Version, res.Cipher = version, cipher
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if first != nil {
		return first
	}
	res.Bytes = total.Load()
	return json.NewEncoder(stdout).Encode(res)
}

// tlsPipeConn writes n buffers on one connection and waits for the reader
// to close it.
func tlsPipeConn(ctx context.Context, addr string, useTLS, batch bool, buf []byte, n int, total *atomic.Int64) (version, cipher string, err error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", "", err
	}
	defer raw.Close()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	var (
		w     io.Writer = raw
		r     io.Reader = raw
		close func() error
		ack   [1]byte
	)
	close = raw.(*net.TCPConn).CloseWrite
	if useTLS {
		b := &tlsbatch.Conn{Conn: raw}
		tc := tls.Client(b, &tls.Config{InsecureSkipVerify: true})
		if err := tc.HandshakeContext(ctx); err != nil {
			return "", "", err
		}
		st := tc.ConnectionState()
		version, cipher = tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite)
		w, r, close = tc, tc, tc.CloseWrite
		if batch {
			w = b.Writer(tc)
		}
	}
	// As smtp-source writes a message: its 32 KiB buffer's worth (filled
	// after the header), then the rest in one Write. The split matters:
	// on Linux one 1 MiB write to a loopback socket took twice the CPU of
	// these two (the sender holds the socket through the whole write, and
	// the peer's ACKs wait in its backlog).
	first := min(len(buf), 32<<10)
	for range n {
		m, err := w.Write(buf[:first])
		if err == nil && first < len(buf) {
			var m2 int
			m2, err = w.Write(buf[first:])
			m += m2
		}
		total.Add(int64(m))
		if err == nil {
			_, err = io.ReadFull(r, ack[:])
		}
		if err != nil {
			return version, cipher, err
		}
	}
	if err := close(); err != nil {
		return version, cipher, err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return version, cipher, err
	}
	return version, cipher, nil
}
