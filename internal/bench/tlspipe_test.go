package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// `bench tlspipe`: the reader reads what the writer writes, in the clear
// and over TLS, records batched or not, and each side counts every byte.
func TestTLSPipe(t *testing.T) {
	for _, mode := range [][]string{nil, {"-tls"}, {"-tls", "-batch"}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		pr, pw := io.Pipe()
		var rdOut bytes.Buffer
		rdDone := make(chan error, 1)
		rargs := []string{"-listen", "127.0.0.1:0", "-s", "3", "-l", "100000"}
		if len(mode) > 0 {
			rargs = append(rargs, "-tls")
		}
		go func() {
			err := RunTLSPipe(ctx, rargs, io.MultiWriter(pw, &rdOut), io.Discard)
			pw.Close()
			rdDone <- err
		}()
		addr, err := readListening(pr)
		go io.Copy(io.Discard, pr)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if err := RunTLSPipe(ctx, append([]string{"-connect", addr, "-s", "3", "-m", "7", "-l", "100000"}, mode...), &out, &errOut); err != nil {
			t.Fatalf("%q: writer: %v: %s", mode, err, errOut.String())
		}
		if err := <-rdDone; err != nil {
			t.Fatalf("%q: reader: %v", mode, err)
		}
		cancel()
		var w, r tlsPipeResult
		_, rest, _ := strings.Cut(rdOut.String(), "\n")
		if err := json.Unmarshal(out.Bytes(), &w); err != nil || w.Bytes != 700000 || w.Seconds <= 0 || (w.Cipher != "") != (len(mode) > 0) {
			t.Errorf("%q: writer %q %v", mode, out.String(), err)
		}
		if err := json.Unmarshal([]byte(rest), &r); err != nil || r.Bytes != 700000 {
			t.Errorf("%q: reader %q %v", mode, rdOut.String(), err)
		}
	}
}
