package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
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

// A bad flag is a usage error naming it: -l or -read-buf of terabytes was
// taken and its buffer's allocation ended the process, and -m -1 or
// -read-buf 0 were refused as "-s and -l positive".
func TestTLSPipeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-connect", "127.0.0.1:1", "-l", "1099511627776"}, "-l 1099511627776"},
		{[]string{"-connect", "127.0.0.1:1", "-l", "1073741825"}, "-l 1073741825"},
		{[]string{"-listen", "127.0.0.1:0", "-read-buf", "1099511627776"}, "-read-buf 1099511627776"},
		{[]string{"-listen", "127.0.0.1:0", "-read-buf", "0"}, "-read-buf 0"},
		{[]string{"-connect", "127.0.0.1:1", "-m", "-1"}, "-m -1"},
		{[]string{"-connect", "127.0.0.1:1", "-s", "0"}, "-s 0"},
		{[]string{"-connect", "127.0.0.1:1", "-s", "100001"}, "-s 100001"},
		{[]string{"-s", "2"}, "one of -listen and -connect"},
	} {
		_, err := parseTLSPipe(c.args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, cli.ErrUsage) || !strings.Contains(fmt.Sprint(err), "bench tlspipe: ") || !strings.Contains(fmt.Sprint(err), c.flag) {
			t.Errorf("%q: %v (status %d), want a usage error naming %s", c.args, err, status, c.flag)
		}
	}
	if _, err := parseTLSPipe([]string{"-connect", "127.0.0.1:1", "-l", "1073741824"}, io.Discard, io.Discard); err != nil {
		t.Errorf("-l 1 GiB: %v", err)
	}
}
