package smtpsource

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tlsbatch"
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
		if len(w) > tlsbatch.Size {
			t.Errorf("a write of %d bytes, more than a batch (%d)", len(w), tlsbatch.Size)
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
