package netio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

// The peer receives exactly the concatenation of the writes, in order, for
// messages of every size up to several chunks.
func TestWriterOrderNoLoss(t *testing.T) {
	for _, maxSize := range []int{16, 700, 3 * chunkSize} {
		t.Run(fmt.Sprint("max=", maxSize), func(t *testing.T) {
			cli, srv := tcpPair(t)
			got := readAll(srv)
			msgs, want := messages(uint64(maxSize), 2000*16/min(maxSize, 16*16), maxSize)
			w := NewWriter(cli, &Options{MaxQueued: 256 << 10})
			for i, m := range msgs {
				var n int
				var err error
				if i%2 == 0 {
					n, err = w.Write(m)
				} else {
					n, err = w.WriteString(string(m))
				}
				if n != len(m) || err != nil {
					t.Fatalf("write %d: %d, %v", i, n, err)
				}
				m[0]++ // the writer must not have kept a reference
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			cli.CloseWrite()
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("peer got %d bytes, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
			}
			s := w.Stats()
			if s.Accepted != int64(len(want)) || s.Written != s.Accepted || s.Queued != 0 {
				t.Fatalf("stats %+v, want %d accepted and written", s, len(want))
			}
		})
	}
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// Concurrent writers: every message arrives whole, and each writer's
// messages arrive in its order.
func TestWriterConcurrentAtomic(t *testing.T) {
	cli, srv := tcpPair(t)
	got := readAll(srv)
	w := NewWriter(cli, &Options{MaxQueued: 8 << 10})
	const writers, per = 4, 3000
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				// Record: writer, sequence, filler of length 1..200, all in
				// a length-prefixed frame.
				m := make([]byte, 8+1+i%200)
				binary.BigEndian.PutUint16(m, uint16(len(m)))
				binary.BigEndian.PutUint16(m[2:], uint16(g))
				binary.BigEndian.PutUint32(m[4:], uint32(i))
				for j := 8; j < len(m); j++ {
					m[j] = byte(g*31 + i)
				}
				if _, err := w.Write(m); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cli.CloseWrite()
	b := <-got
	next := make([]uint32, writers)
	for len(b) > 0 {
		if len(b) < 8 {
			t.Fatalf("truncated frame: %d bytes left", len(b))
		}
		n := int(binary.BigEndian.Uint16(b))
		g := binary.BigEndian.Uint16(b[2:])
		i := binary.BigEndian.Uint32(b[4:])
		if int(g) >= writers || n != 8+1+int(i)%200 || n > len(b) || i != next[g] {
			t.Fatalf("bad frame: len %d writer %d seq %d (want seq %v)", n, g, i, next)
		}
		for _, c := range b[8:n] {
			if c != byte(int(g)*31+int(i)) {
				t.Fatalf("frame %d/%d corrupted", g, i)
			}
		}
		next[g]++
		b = b[n:]
	}
	for g, n := range next {
		if n != per {
			t.Errorf("writer %d: %d messages arrived, want %d", g, n, per)
		}
	}
}

// Without any Flush, a request/response exchange completes: the flusher
// sends as soon as the producer goes idle.
func TestWriterIdleFlush(t *testing.T) {
	cli, srv := tcpPair(t)
	w := NewWriter(cli, nil)
	defer w.Close()
	go func() { // echo server, one line at a time
		r := bufio.NewReader(srv)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			srv.Write(line)
		}
	}()
	r := bufio.NewReader(cli)
	for i := 0; i < 200; i++ {
		req := fmt.Sprintf("request %d\n", i)
		if _, err := w.WriteString(req); err != nil {
			t.Fatal(err)
		}
		resp, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("round %d: %v (data not flushed while idle?)", i, err)
		}
		if resp != req {
			t.Fatalf("round %d: got %q want %q", i, resp, req)
		}
	}
	if err := w.Flush(); err != nil { // the flusher may still be accounting the last write
		t.Fatal(err)
	}
	if s := w.Stats(); s.Flushes == 0 || s.Written != s.Accepted || s.Accepted != 2290 {
		t.Fatalf("stats %+v", s)
	}
}

// blockingReader signals entered when Read is first called, then blocks
// until release is closed and reports EOF.
type blockingReader struct{ entered, release chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	close(r.entered)
	<-r.release
	return 0, io.EOF
}

// A batch never passes more than 1024 buffers to one writev, and a queue of
// more chunks goes out in several writevs, in order.
func TestWriterIovecCap(t *testing.T) {
	cli, srv := tcpPair(t)
	got := readAll(srv)
	// Tiny chunks, so that 3000 writes fill 3000 chunks.
	w := NewWriterForTest(cli, &Options{MaxQueued: 1 << 20}, 64, nil)
	// ReadFrom holds the connection while it copies, so everything written
	// meanwhile queues up.
	br := blockingReader{make(chan struct{}), make(chan struct{})}
	copied := make(chan error, 1)
	go func() { _, err := w.ReadFrom(br); copied <- err }()
	<-br.entered
	var want []byte
	for i := range 3000 {
		m := bytes.Repeat([]byte{byte(i)}, 64)
		want = append(want, m...)
		if _, err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if s := w.Stats(); s.Flushes != 0 || s.Queued != len(want) {
		t.Fatalf("before release: %+v", s)
	}
	close(br.release)
	if err := <-copied; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := w.Stats()
	if s.MaxIovecs != maxIovecs {
		t.Errorf("largest writev had %d buffers, want exactly %d", s.MaxIovecs, maxIovecs)
	}
	if s.Flushes < 3 {
		t.Errorf("3000 chunks went out in %d writevs, want at least 3", s.Flushes)
	}
	cli.CloseWrite()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer got %d bytes, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
	}
}

func TestWriterClosed(t *testing.T) {
	cli, _ := tcpPair(t)
	w := NewWriter(cli, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// panicWriter panics in every Write.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom") }

// gatedPanicWriter panics in Write once released; entered says a Write
// has begun.
type gatedPanicWriter struct{ entered, release chan struct{} }

func (g gatedPanicWriter) Write([]byte) (int, error) {
	close(g.entered)
	<-g.release
	panic("boom")
}

// TestWriterDestinationPanics: a destination that panics in a write fails
// the Writer from then on. The panic goes up the goroutine that wrote: a
// Flush, which may recover it, or the flusher, which makes it the error.
// Either way the Writer's lock stays sound; it used to be unlocked twice,
// a fatal error that no recover stops, and the flusher's panic ended the
// process.
func TestWriterDestinationPanics(t *testing.T) {
	// The flusher writes: Flush comes after the panic.
	g := gatedPanicWriter{make(chan struct{}), make(chan struct{})}
	w := NewWriter(g, nil)
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	close(g.release)
	if err := w.Flush(); !errors.Is(err, errDstPanic) {
		t.Fatalf("Flush after the flusher's write panicked: %v, want %v", err, errDstPanic)
	}
	if err := w.Close(); !errors.Is(err, errDstPanic) {
		t.Fatalf("Close after the panic: %v, want %v", err, errDstPanic)
	}
	// Flush writes (mostly; the flusher may come first).
	for range 20 {
		w := NewWriter(panicWriter{}, nil)
		if _, err := w.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		var flushErr error
		v := func() (v any) {
			defer func() { v = recover() }()
			flushErr = w.Flush()
			return nil
		}()
		if v != nil && v != "boom" || v == nil && !errors.Is(flushErr, errDstPanic) {
			t.Fatalf("Flush: panic %v, error %v; want panic boom, or %v", v, flushErr, errDstPanic)
		}
		if _, err := w.Write([]byte("y")); !errors.Is(err, errDstPanic) {
			t.Fatalf("Write after the panic: %v, want %v", err, errDstPanic)
		}
		if err := w.Close(); !errors.Is(err, errDstPanic) {
			t.Fatalf("Close after the panic: %v, want %v", err, errDstPanic)
		}
	}
}
