package smtpsourcecmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/smtpsink"
)

// SIZE= goes with MAIL by default where the server offers SIZE (package
// smtpsink does), and not with -size=false; -xforward and -xclient reach
// it.
func TestSizeAndXFlags(t *testing.T) {
	var mu sync.Mutex
	var mails []string
	srv, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0",
		Capture: func(tx smtpsink.Transaction) io.WriteCloser {
			mu.Lock()
			mails = append(mails, tx.MailArgs)
			mu.Unlock()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	for _, c := range []struct {
		flags  []string
		size   bool
		replay string
	}{
		{nil, true, ""},
		{[]string{"-size=false"}, false, ""},
		{[]string{"-xclient", "NAME=c.example ADDR=192.0.2.1", "-xforward", "NAME=f.example"}, true, `"xclient":{"220":1},"xforward":{"250":2}`},
	} {
		mu.Lock()
		mails = nil
		mu.Unlock()
		var out, errb bytes.Buffer
		args := append(append([]string{"-q", "-json", "-m", "2", "-d"}, c.flags...), srv.Addr().String())
		if err := Run(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("%q: %v %s%s", c.flags, err, out.Bytes(), errb.Bytes())
		}
		mu.Lock()
		for _, m := range mails {
			if strings.Contains(m, " SIZE=") != c.size {
				t.Errorf("%q: MAIL FROM:%s", c.flags, m)
			}
		}
		if len(mails) != 2 {
			t.Errorf("%q: %d MAILs", c.flags, len(mails))
		}
		mu.Unlock()
		if !strings.Contains(out.String(), c.replay) {
			t.Errorf("%q: replies without %s: %s", c.flags, c.replay, out.Bytes())
		}
	}
}
