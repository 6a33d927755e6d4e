//go:build unix

package netio

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"testing"
)

// unixPair returns the two ends of a Unix stream socket connection,
// closed at the end of the test.
func unixPair(t *testing.T) (client, server *net.UnixConn) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// Copy to a *net.UnixConn (whose ReadFrom is the datagram one, not
// io.ReaderFrom's), directly and through a Conn's ReadFrom, for a whole
// file and a section of one: every byte arrives, in order, with no panic.
func TestCopyUnixConn(t *testing.T) {
	for _, viaConn := range []bool{false, true} {
		for _, section := range []bool{false, true} {
			f, data := tempFile(t, 300<<10)
			want := data
			var src io.Reader = f
			if section {
				if _, err := f.Seek(1000, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				src = &io.LimitedReader{R: f, N: 100 << 10}
				want = data[1000 : 1000+100<<10]
			}
			cli, srv := unixPair(t)
			recv := readAll(srv)
			var n int64
			var err error
			if viaConn {
				c := NewConn(cli, nil)
				c.Write([]byte("HEAD"))
				n, err = io.Copy(c, src)
				if cerr := c.Close(); err == nil {
					err = cerr
				}
				want = append([]byte("HEAD"), want...)
				n += 4
			} else {
				n, err = Copy(cli, src)
				cli.CloseWrite()
			}
			if err != nil || n != int64(len(want)) {
				t.Fatalf("conn %v, section %v: copied %d, %v; want %d", viaConn, section, n, err, len(want))
			}
			if b := <-recv; !bytes.Equal(b, want) {
				t.Fatalf("conn %v, section %v: peer got %d bytes, want %d", viaConn, section, len(b), len(want))
			}
		}
	}
}
