package smtpsource

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
)

// Over TLS a 1 MiB message goes out in writes of several records each,
// not in one write a record (64 a MiB), and arrives whole.
func TestTLSBatchesRecords(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{tlsConf: srvTLS}
	var l writeLog
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Length, cfg.Digests = 2, true, 1<<20, true
	cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
	res, err := RunWith(context.Background(), cfg, l.dial, nil)
	if err != nil || res.Delivered != 2 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	big, bytes := 0, 0
	for _, w := range l.writes {
		if len(w) > batchSize {
			t.Errorf("a write of %d bytes, more than a batch (%d)", len(w), batchSize)
		}
		if len(w) >= 16<<10 {
			big++
			bytes += len(w)
		}
	}
	const records = 2 * (1 << 20) / (16 << 10) // the least the two messages take
	if bytes < 2<<20 || big > records/2 {
		t.Errorf("%d writes of 16 KiB or more, %d bytes in them; the messages are %d records", big, bytes, records)
	}
	if v, err := Verify(strings.NewReader(sentLog(f.accepted())), res.Digests); err != nil || !v.OK() || v.Matched != 2 {
		t.Errorf("verify %+v %v", v, err)
	}
}

// A batchConn passes writes through unless held; held, it writes nothing
// until a batch is full or flushed, and a failed write is the error of
// the Write or flush that made it.
func TestBatchConn(t *testing.T) {
	c := &countConn{}
	b := &batchConn{Conn: c}
	b.Write([]byte("handshake"))
	if c.n != 1 {
		t.Fatalf("unheld: %d writes", c.n)
	}
	b.hold = true
	rec := make([]byte, batchSize/3)
	for i := range 3 {
		if n, err := b.Write(rec); n != len(rec) || err != nil || c.n != 1 {
			t.Fatalf("record %d: %d, %v; %d writes", i, n, err, c.n)
		}
	}
	b.Write(rec) // no room: the three go out, this one is held
	if c.n != 2 || c.last != 3*len(rec) {
		t.Fatalf("full batch: %d writes, the last %d bytes", c.n, c.last)
	}
	if err := b.flush(); err != nil || c.n != 3 || c.last != len(rec) {
		t.Fatalf("flush: %v; %d writes, the last %d bytes", err, c.n, c.last)
	}
	if err := b.flush(); err != nil || c.n != 3 {
		t.Fatalf("empty flush: %v; %d writes", err, c.n)
	}
	c.err = errors.New("broken")
	b.Write(rec)
	if err := b.flush(); !errors.Is(err, c.err) {
		t.Errorf("flush on a broken connection: %v", err)
	}
	for range 3 {
		b.Write(rec)
	}
	if n, err := b.Write(rec); n != 0 || !errors.Is(err, c.err) {
		t.Errorf("write that fills the batch on a broken connection: %d, %v", n, err)
	}
}

type countConn struct {
	net.Conn
	n, last int
	err     error
}

func (c *countConn) Write(p []byte) (int, error) {
	c.n++
	c.last = len(p)
	if c.err != nil {
		return 0, c.err
	}
	return len(p), nil
}
