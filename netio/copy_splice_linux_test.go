package netio

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
)

// spliceReads: ReadFrom splices sockets and pipes here.
const spliceReads = true

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 3))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestWriterReadFromSpliceSources: a bare Writer's ReadFrom (io.Copy and
// io.CopyN into it) from a TCP socket, a pipe or a Unix socket splices
// every byte, in order between what was written before and after it,
// and io.CopyN's takes only its N from the source, the rest left for
// the next read. It copied them through its buffer (nothing spliced).
func TestWriterReadFromSpliceSources(t *testing.T) {
	data := randomBytes(3<<20 + 4321)
	sources := map[string]func(t *testing.T) (io.Reader, io.WriteCloser){
		"tcp": func(t *testing.T) (io.Reader, io.WriteCloser) {
			a, b := tcpPair(t)
			return a, b
		},
		"pipe": func(t *testing.T) (io.Reader, io.WriteCloser) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { pr.Close() })
			return pr, pw
		},
		"unix": func(t *testing.T) (io.Reader, io.WriteCloser) {
			ln, err := net.Listen("unix", t.TempDir()+"/s")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			acc := make(chan net.Conn, 1)
			go func() { c, _ := ln.Accept(); acc <- c }()
			a, err := net.Dial("unix", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			b := <-acc
			if b == nil {
				t.Fatal("accept failed")
			}
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, b.(*net.UnixConn)
		},
	}
	for name, mk := range sources {
		for _, limited := range []bool{false, true} {
			sub := name
			if limited {
				sub += "/CopyN"
			}
			t.Run(sub, func(t *testing.T) {
				src, feed := mk(t)
				go func() { feed.Write(data); feed.Close() }()
				cli, srv := tcpPair(t)
				recv := readAll(srv)
				w := NewWriter(cli, nil)
				spliced := splicedCount(w)
				w.WriteString("HEAD")
				want := data
				var n int64
				var err error
				if limited {
					want = data[:2<<20+7]
					n, err = io.CopyN(w, src, int64(len(want)))
				} else {
					n, err = io.Copy(w, src)
				}
				if err != nil || n != int64(len(want)) {
					t.Fatalf("copy: %d, %v; want %d", n, err, len(want))
				}
				if got := spliced(); got != n {
					t.Errorf("%d bytes spliced of %d", got, n)
				}
				w.WriteString("TAIL")
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				cli.CloseWrite()
				got := <-recv
				if !bytes.Equal(got, append(append([]byte("HEAD"), want...), "TAIL"...)) {
					t.Fatalf("peer got %d bytes, want %d in order", len(got), 8+len(want))
				}
				if limited {
					rest, err := io.ReadAll(src)
					if err != nil || !bytes.Equal(rest, data[len(want):]) {
						t.Fatalf("left in the source: %d bytes, %v; want %d", len(rest), err, len(data)-len(want))
					}
				}
				if s := w.Stats(); s.Written != int64(8+len(want)) || s.Queued != 0 {
					t.Errorf("stats %+v", s)
				}
			})
		}
	}
}

// bufConn is a user's connection that reads through a buffer of its own
// (as after peeking at a protocol's first line): its descriptor holds
// only what the buffer has not taken.
type bufConn struct {
	*net.TCPConn
	r io.Reader
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestWriterReadFromOwnReader: a source of the user's type that has a
// descriptor (it embeds a *net.TCPConn) but reads its own way is read
// with its Read, not spliced from the descriptor, which would skip what
// its buffer holds.
func TestWriterReadFromOwnReader(t *testing.T) {
	in, feed := tcpPair(t)
	go func() { feed.Write([]byte("hello, world")); feed.Close() }()
	br := bufio.NewReaderSize(in, 16)
	if _, err := br.Peek(5); err != nil {
		t.Fatal(err)
	}
	cli, srv := tcpPair(t)
	recv := readAll(srv)
	w := NewWriter(cli, nil)
	spliced := splicedCount(w)
	if n, err := w.ReadFrom(bufConn{in, br}); n != 12 || err != nil {
		t.Fatalf("ReadFrom: %d, %v; want 12", n, err)
	}
	w.Close()
	cli.CloseWrite()
	if got := <-recv; string(got) != "hello, world" {
		t.Errorf("peer got %q", got)
	}
	if n := spliced(); n != 0 {
		t.Errorf("%d bytes spliced from the descriptor under the user's Read", n)
	}
}
