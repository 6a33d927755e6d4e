package smtpsource

import (
	"context"
	"crypto/tls"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// conversations parses a trace ("ID < "..."" and "ID > "..."" lines; the
// sink's "ID = ..." lines, its TLS state, are skipped) into what each
// connection read and wrote, in order.
func conversations(t *testing.T, trace string) map[int64]*[2]string {
	t.Helper()
	convs := map[int64]*[2]string{}
	for _, l := range strings.Split(strings.TrimSuffix(trace, "\n"), "\n") {
		idS, rest, ok1 := strings.Cut(l, " ")
		dir, q, ok2 := strings.Cut(rest, " ")
		if dir == "=" {
			continue
		}
		id, err1 := strconv.ParseInt(idS, 10, 64)
		p, err2 := strconv.Unquote(q)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || dir != "<" && dir != ">" {
			t.Fatalf("trace line %q", l)
		}
		c := convs[id]
		if c == nil {
			c = new([2]string)
			convs[id] = c
		}
		if dir == "<" {
			c[0] += p
		} else {
			c[1] += p
		}
	}
	return convs
}

// Config.Trace (smtp-source -v) shows each connection's conversation, in
// the clear over TLS: what the source wrote on each is what package
// smtpsink's own trace shows it read, and what it read, what the sink
// wrote, connection for connection.
func TestTrace(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, c := range []struct {
		name     string
		startTLS bool
		reuse    bool
		conns    int
	}{{"plain, a connection a message", false, false, 3}, {"STARTTLS, one connection", true, true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			var sinkTrace, trace tooltest.Buffer
			scfg := smtpsink.Config{Trace: &sinkTrace}
			if c.startTLS {
				scfg.TLS = srvTLS
			}
			srv := startSmtpsinkCfg(t, scfg)
			cfg := base(srv.Addr().String())
			cfg.Messages, cfg.Reuse, cfg.Body, cfg.Trace = 3, c.reuse, "mail", &trace
			if c.startTLS {
				cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
			}
			res := runOK(t, cfg)
			if res.Delivered != 3 || res.Connections != int64(c.conns) {
				t.Fatalf("%+v", res)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil { // every session ended: traced whole
				t.Fatal(err)
			}
			ours, sinks := conversations(t, trace.String()), conversations(t, sinkTrace.String())
			var ids []int64
			for id := range ours {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if want := []int64{1, 2, 3}[:c.conns]; !slices.Equal(ids, want) {
				t.Fatalf("connections traced %v, want %v", ids, want)
			}
			var sent, read []string
			for _, id := range ids {
				conv := ours[id]
				if !strings.HasPrefix(conv[0], "220 ") || !strings.Contains(conv[1], "MAIL FROM:<from@client.test>") || !strings.HasSuffix(conv[1], "QUIT\r\n") {
					t.Errorf("connection %d: read %.80q..., wrote %.80q...", id, conv[0], conv[1])
				}
				if strings.Contains(conv[0], "\x16\x03") || c.startTLS && strings.Count(conv[1], "EHLO ") != 2 {
					t.Errorf("connection %d: not the conversation in the clear: %q", id, conv[1])
				}
				sent = append(sent, conv[1]+"|"+conv[0])
			}
			for _, conv := range sinks {
				read = append(read, conv[0]+"|"+conv[1])
			}
			slices.Sort(sent)
			slices.Sort(read)
			if !slices.Equal(sent, read) {
				t.Errorf("the source's trace (written|read):\n%q\nthe sink's (read|written):\n%q", sent, read)
			}
		})
	}
}
