package smtpsource

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"math/rand/v2"
	stdtextproto "net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func asStrings(b [][]byte) []string {
	var s []string
	for _, m := range b {
		s = append(s, string(m))
	}
	return s
}

// LoadMessages: a directory's files by name (hidden files and
// subdirectories left out), a Maildir's cur/ and new/ by name (tmp/ left
// out), an mbox's messages (mboxrd unquoting, the separating empty line
// dropped), a plain file whole; nothing to send is ErrMessages.
func TestLoadMessages(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "plain"), map[string]string{
		"b": "Subject: b\n\nB\n", "a": "Subject: a\n\nA\n", ".hidden": "x", "sub/c": "Subject: c\n\n"})
	writeFiles(t, filepath.Join(dir, "maildir"), map[string]string{
		"cur/2.x:2,S": "Subject: 2\r\n\r\n", "new/1.x": "Subject: 1\r\n\r\n", "new/3.x": "Subject: 3\r\n\r\n", "tmp/0.x": "Subject: tmp\r\n\r\n"})
	writeFiles(t, dir, map[string]string{
		"mbox": "From a@example.com Thu Dec  3 10:00:00 2026\nSubject: 1\n\n>From the start\n>>From here\n>Fromage\nend\n\n" +
			"From b@example.com Thu Dec  3 10:00:01 2026\nSubject: 2\n\nlast\n",
		"mbox-crlf": "From a Thu Dec  3 10:00:00 2026\r\nSubject: 1\r\n\r\nx\r\n\r\nFrom b Thu Dec  3 10:00:00 2026\r\nSubject: 2\r\n\r\ny\r\n",
		"one":       "Subject: one\n\nFrom the start\n",
	})
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	for _, c := range []struct {
		path string
		want []string
	}{
		{"plain", []string{"Subject: a\n\nA\n", "Subject: b\n\nB\n"}},
		{"maildir", []string{"Subject: 1\r\n\r\n", "Subject: 2\r\n\r\n", "Subject: 3\r\n\r\n"}},
		{"mbox", []string{"Subject: 1\n\nFrom the start\n>From here\n>Fromage\nend\n", "Subject: 2\n\nlast\n"}},
		{"mbox-crlf", []string{"Subject: 1\r\n\r\nx\r\n", "Subject: 2\r\n\r\ny\r\n"}},
		{"one", []string{"Subject: one\n\nFrom the start\n"}},
	} {
		for i, w := range c.want { // the lines CRLF-ended, as Run sends them
			c.want[i] = strings.ReplaceAll(strings.ReplaceAll(w, "\r\n", "\n"), "\n", "\r\n")
		}
		got, err := LoadMessages(filepath.Join(dir, c.path))
		if err != nil || !slices.Equal(asStrings(got), c.want) {
			t.Errorf("%s: %q, %v; want %q", c.path, asStrings(got), err, c.want)
		}
	}
	if _, err := LoadMessages(filepath.Join(dir, "empty")); !errors.Is(err, ErrMessages) {
		t.Errorf("empty directory: %v, want ErrMessages", err)
	}
	// An empty file holds no message (Postfix's smtp-source -F sends its
	// default body then, without a header): alone or in a directory.
	writeFiles(t, dir, map[string]string{"zero": "", "withzero/a": "Subject: a\n\n", "withzero/b": ""})
	for _, p := range []string{"zero", "withzero"} {
		if msgs, err := LoadMessages(filepath.Join(dir, p)); !errors.Is(err, ErrMessages) || !strings.Contains(fmt.Sprint(err), "empty") {
			t.Errorf("%s: %q, %v; want ErrMessages, empty", p, asStrings(msgs), err)
		}
	}
	// So is an empty message in an mbox: its "From " line followed by the
	// next, or by the separating empty line alone, or by nothing at all.
	for name, mbox := range map[string]string{
		"mbox-empty-first": "From a\nFrom b\nSubject: b\n\nB\n",
		"mbox-blank-first": "From a\n\nFrom b\nSubject: b\n\nB\n",
		"mbox-blank-crlf":  "From a\r\n\r\nFrom b\r\nSubject: b\r\n\r\nB\r\n",
		"mbox-empty-last":  "From a\nSubject: a\n\nA\n\nFrom b\n",
		"mbox-blank-last":  "From a\nSubject: a\n\nA\n\nFrom b\n\n",
		"mbox-only":        "From a\n",
	} {
		writeFiles(t, dir, map[string]string{name: mbox})
		if msgs, err := LoadMessages(filepath.Join(dir, name)); !errors.Is(err, ErrMessages) || !strings.Contains(fmt.Sprint(err), "empty") {
			t.Errorf("%s: %q, %v; want ErrMessages, empty", name, asStrings(msgs), err)
		}
	}
	if got := asStrings(SplitMbox([]byte("From a\n\nFrom b\nB\n"))); !slices.Equal(got, []string{"", "B\n"}) {
		t.Errorf("SplitMbox of an empty message: %q, want it empty", got)
	}
	for _, cfg := range []Config{{Addr: "127.0.0.1:25", Message: []byte{}}, {Addr: "127.0.0.1:25", MessageSet: [][]byte{[]byte("Subject: a\n\n"), {}}}} {
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("Check of an empty message %q %q: %v, want ErrConfig", cfg.Message, cfg.MessageSet, err)
		}
	}
	if _, err := LoadMessages(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
}

// The acceptance: 12 files sent as 36 messages (in turn, over
// sessions reusing their connections, pipelined, with DATA and with BDAT)
// reach package smtpsink as exactly the 12 files, 3 times each: the
// sink's digests are the files' own (CRLF files are sent as they are).
func TestMessageSetSmtpsink(t *testing.T) {
	dir := t.TempDir()
	want := map[string]int{}
	for i := range 12 {
		body := fmt.Sprintf("From: <a%d@example.com>\r\nSubject: file %d\r\n\r\n%s.dot line\r\n%s\r\n", i, i, strings.Repeat("x", i*997), strings.Repeat("yz ", i*301))
		name := fmt.Sprintf("m%02d.eml", i)
		writeFiles(t, dir, map[string]string{name: body})
		want[fmt.Sprintf("%x %d", md5.Sum([]byte(body)), len(body))] = 3
	}
	set, err := LoadMessages(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{Sessions: 3, Reuse: true, Pipelining: true},
		{Sessions: 2, Reuse: true, Chunking: true, ChunkSize: 3000},
		{Sessions: 4},
	} {
		var mu sync.Mutex
		logged := map[string]int{}
		srv := startSmtpsinkCfg(t, smtpsink.Config{Digest: digest.MD5, OnMessage: func(m smtpsink.Message) {
			mu.Lock()
			logged[fmt.Sprintf("%s %d", m.Digest, m.Size)]++
			mu.Unlock()
		}})
		c.Addr, c.Messages, c.MessageSet, c.Digests = srv.Addr().String(), 36, set, true
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Delivered != 36 || res.Errors != 0 {
			t.Fatalf("%+v", res)
		}
		mu.Lock() // OnMessage has run for each before its 250
		got := fmt.Sprint(logged)
		mu.Unlock()
		if got != fmt.Sprint(want) {
			t.Errorf("%+v: the sink got %v, want %v", c, got, want)
		}
		var log strings.Builder
		for d, n := range logged {
			for range n {
				log.WriteString(d + "\n")
			}
		}
		if v, err := Verify(strings.NewReader(log.String()), res.Digests); err != nil || !v.OK() || v.Matched != 36 {
			t.Errorf("verify %+v %v", v, err)
		}
	}
}

// -l 1000:50000 over 200 messages (the acceptance): every body is
// within the range and they spread over more than 30,000 bytes; each
// message's length is the same in another run (a function of k).
func TestLengthRange(t *testing.T) {
	lengths := func() map[string]int {
		f := &fakeServer{ext: []string{"PIPELINING"}}
		addr := f.start(t)
		res, err := Run(context.Background(), Config{Addr: addr, Sessions: 2, Messages: 200, Length: 1000, LengthMax: 50000, Body: "mail", Reuse: true, Pipelining: true})
		if err != nil || res.Delivered != 200 || res.Errors != 0 || res.LengthMax != 50000 {
			t.Fatalf("%+v %v", res, err)
		}
		byID := map[string]int{}
		var total int64
		for _, m := range f.messages() {
			hdr, body, ok := strings.Cut(string(m), "\r\n\r\n")
			if !ok || !strings.HasSuffix(body, "\r\n") {
				t.Fatalf("message %.200q", m)
			}
			_, id, _ := strings.Cut(hdr, "Message-Id: <")
			id, _, _ = strings.Cut(id, ".")
			byID[id] = len(body) - 2
			total += int64(len(m))
		}
		if total != res.Bytes {
			t.Errorf("%d bytes received, %d counted", total, res.Bytes)
		}
		return byID
	}
	a, b := lengths(), lengths()
	lo, hi := 1<<30, 0
	for id, n := range a {
		if n < 1000 || n > 50000 {
			t.Errorf("message %s: body of %d bytes", id, n)
		}
		lo, hi = min(lo, n), max(hi, n)
		if b[id] != n {
			t.Errorf("message %s: %d bytes, then %d in another run", id, n, b[id])
		}
	}
	if len(a) != 200 || hi-lo <= 30000 {
		t.Errorf("%d messages, lengths %d to %d", len(a), lo, hi)
	}
}

// -header lines follow the generated header (and precede a file's);
// senders and recipients are taken from their lists in turn, the header's
// From and To with them.
func TestHeadersAndLists(t *testing.T) {
	f := &fakeServer{}
	addr := f.start(t)
	res, err := Run(context.Background(), Config{Addr: addr, Messages: 3, Recipients: 2, Reuse: true,
		Headers: []string{"X-Test: one", "X-Other:two"}, FromList: []string{"<s1@example.com>", "s2@example.com"},
		ToList: []string{"r1@example.com", "r2@example.com", "r3@example.com"}})
	if err != nil || res.Delivered != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	var env []string
	for _, c := range f.commands() {
		if strings.HasPrefix(c, "MAIL") || strings.HasPrefix(c, "RCPT") {
			env = append(env, c)
		}
	}
	want := []string{"MAIL FROM:<s1@example.com>", "RCPT TO:<r1@example.com>", "RCPT TO:<r2@example.com>",
		"MAIL FROM:<s2@example.com>", "RCPT TO:<r3@example.com>", "RCPT TO:<r1@example.com>",
		"MAIL FROM:<s1@example.com>", "RCPT TO:<r2@example.com>", "RCPT TO:<r3@example.com>"}
	if !slices.Equal(env, want) {
		t.Errorf("envelopes %q, want %q", env, want)
	}
	for i, m := range f.messages() {
		hdr, _, _ := strings.Cut(string(m), "\r\n\r\n")
		from := []string{"s1", "s2", "s1"}[i]
		to := []string{"r1", "r3", "r2"}[i]
		if !strings.HasPrefix(hdr, "From: <"+from+"@example.com>\r\nTo: <"+to+"@example.com>\r\n") || !strings.HasSuffix(hdr, "\r\nX-Test: one\r\nX-Other:two") {
			t.Errorf("message %d header %q", i, hdr)
		}
	}

	f = &fakeServer{}
	addr = f.start(t)
	if _, err := Run(context.Background(), Config{Addr: addr, Messages: 1, Headers: []string{"X-Test: one"}, Message: []byte("Subject: s\n\nbody\n")}); err != nil {
		t.Fatal(err)
	}
	if got := string(f.messages()[0]); got != "X-Test: one\r\nSubject: s\r\n\r\nbody\r\n" {
		t.Errorf("file message with a header: %q", got)
	}
	// A header line that starts with a dot is dot-stuffed after DATA, as
	// the body's lines are: the server keeps it as given.
	f = &fakeServer{}
	addr = f.start(t)
	if _, err := Run(context.Background(), Config{Addr: addr, Messages: 1, Headers: []string{".X-Dot: y"}, Message: []byte("Subject: s\n\nbody\n")}); err != nil {
		t.Fatal(err)
	}
	if got := string(f.messages()[0]); got != ".X-Dot: y\r\nSubject: s\r\n\r\nbody\r\n" {
		t.Errorf("a header line with a leading dot: %q", got)
	}

	for _, bad := range []Config{
		{Headers: []string{"no colon"}}, {Headers: []string{"X-A: b\r\nX-C: d"}}, {Headers: []string{"Bad Name: x"}},
		{ToList: []string{"a@b"}, Recipients: 2}, {FromList: []string{}}, {ToList: []string{"a@b>\r\nDATA"}},
		{ToList: []string{"a\x00@b"}}, {FromList: []string{"a\x00@b"}}, {OldMode: true, Headers: []string{"X-A: b"}}, {OldMode: true, Subject: "s"},
		{Length: 10, LengthMax: 5}, {Length: 10, LengthMax: 20, Message: []byte("x")},
		{MessageSet: [][]byte{}}, {MessageSet: [][]byte{[]byte("x")}, Message: []byte("x")},
		{From: "a>b@c"}, {To: "<a<b@c>"}, {From: "a@b> SIZE=1"},
	} {
		bad.Addr = "127.0.0.1:1"
		if _, err := Run(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
}

// Against Postfix's smtp-sink, whose dump holds each message as it
// arrived (LF-ended): a Maildir's 3 messages, sent 9 times in turn, are
// each there 3 times, dot-stuffing undone.
func TestMessageSetPostfixSink(t *testing.T) {
	dir := t.TempDir()
	msgs := map[string]string{
		"new/1.a": "Subject: one\n\n.starts with a dot\n",
		"cur/2.b": "Subject: two\r\n\r\ntwo\r\n",
		"new/3.c": "Subject: three\n\nthree\n..two dots\n",
	}
	writeFiles(t, dir, msgs)
	set, err := LoadMessages(dir)
	if err != nil || len(set) != 3 {
		t.Fatalf("%d messages, %v", len(set), err)
	}
	sink := startSink(t, true)
	res, err := Run(context.Background(), Config{Addr: sink.addr, Messages: 9, Sessions: 2, Reuse: true, Pipelining: true, MessageSet: set})
	if err != nil || res.Delivered != 9 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	sink.counts(t, 2)
	dump, err := os.ReadFile(sink.dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		lf := strings.ReplaceAll(m, "\r\n", "\n")
		if n := strings.Count(string(dump), "\n"+lf); n != 3 {
			t.Errorf("%q is in the dump %d times, want 3:\n%.3000s", lf, n, dump)
		}
	}
}

// TestLengthRangeCuts: with ranged lengths, the body of every length n
// is the first n bytes of the body of LengthMax bytes then CRLF (a CR cut
// from its LF made an 'x'), sent as net/textproto's DotWriter writes it,
// and a message's digest and size are its header's and body's.
func TestLengthRangeCuts(t *testing.T) {
	for _, kind := range []string{"mail", "base64", "longline", ""} {
		cfg := Config{Length: 0, LengthMax: 3000, Body: kind}
		tmpl := newTemplate(&cfg, time.Unix(0, 0))
		tmpl.encodeOnce.Do(tmpl.encode)
		long := makeBody(kind, cfg.LengthMax)
		crs, dots := 0, 0
		for n := 0; n <= cfg.LengthMax; n++ {
			want := append(slices.Clip(long[:n]), "\r\n"...)
			if n > 0 && want[n-1] == '\r' {
				want[n-1] = 'x'
				crs++
			}
			var enc bytes.Buffer
			bw := bufio.NewWriter(&enc)
			dw := stdtextproto.NewWriter(bw).DotWriter()
			dw.Write(want)
			dw.Close()
			m := tmpl.cutOf(n, true)
			body := slices.Concat(m.body, m.bodyTail)
			var sent bytes.Buffer
			m.writeData(&sent)
			encoded := sent.Bytes()
			if !bytes.Equal(body, want) || m.size() != len(want) || !bytes.Equal(encoded, enc.Bytes()) {
				t.Fatalf("body %q: length %d: got %q, sent as %q; want %q, sent as %q", kind, n, body, encoded, want, enc.Bytes())
			}
			if bytes.HasSuffix(want, []byte("\n.\r\n")) {
				dots++ // the cut ends in a line that is a dot
			}
		}
		for k := range int64(20) {
			n := tmpl.length(k)
			want := append(tmpl.header(nil, k), long[:n]...)
			if n > 0 && long[n-1] == '\r' {
				want[len(want)-1] = 'x'
			}
			want = append(want, "\r\n"...)
			if d := tmpl.digest(k); d.MD5 != md5.Sum(want) || d.Size != int64(len(want)) {
				t.Errorf("body %q: message %d: digest %x of %d bytes, want %x of %d", kind, k, d.MD5, d.Size, md5.Sum(want), len(want))
			}
		}
		if kind != "longline" && (crs == 0 || kind == "mail" && dots == 0) {
			t.Errorf("body %q: %d cuts after a CR, %d before a dot's CRLF: the cases are not met", kind, crs, dots)
		}
	}
}

// TestEncodedAhead: without Chunking every message goes with DATA, so the
// template makes the encodings before any message starts, not in the
// first message's time; with Chunking it waits for a message sent with
// DATA.
func TestEncodedAhead(t *testing.T) {
	for _, c := range []Config{{Length: 100}, {LengthMax: 100}, {MessageSet: [][]byte{[]byte("a\n"), []byte("b\n")}}} {
		if tmpl := newTemplate(&c, time.Unix(0, 0)); !tmpl.encoded {
			t.Errorf("%d:%d, %d in a set: no encodings made ahead", c.Length, c.LengthMax, len(c.MessageSet))
		}
		c.Chunking = true
		if tmpl := newTemplate(&c, time.Unix(0, 0)); tmpl.encoded {
			t.Errorf("%d:%d, %d in a set, with Chunking: encodings made ahead", c.Length, c.LengthMax, len(c.MessageSet))
		}
	}
}

// Helo is what EHLO gives, a domain or an address literal: one with a
// space, a tab, '<' or the like passed Check and went out as a malformed
// EHLO ("EHLO a b"); it is ErrConfig, as From and To with an angle
// bracket are. What RFC 5321 allows is taken, and underscores too; the
// name taken goes out as given.
func TestHeloName(t *testing.T) {
	for _, bad := range []string{
		"a b", "a\tb", "<a>", "a<b", "host.example>", "a,b", "a;b", "a@b", "a/b", "jörg.example",
		".a", "a.", "a..b", "-a.example", "a-.example", "[192.0.2.1", "192.0.2.1]", "[]",
		"[192.0.2.1 ]", "[IPv6:192.0.2.1]", "[IPv6:fe80::1%eth0]", "[IPv6:zz]", "[300.0.0.1]",
		"[tag:a b]", "[tag:]", "[:x]", "[t g:x]", "[tag:a[b]", "a\vb", strings.Repeat("a", 64) + ".example",
		strings.Repeat("abcdefg.", 32) + "x",
	} {
		cfg := Config{Addr: "127.0.0.1:1", Helo: bad}
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("Helo %q: %v, want ErrConfig", bad, err)
		}
	}
	good := []string{"client.test", "localhost", "a", "my_host.test", "x-1.example.com", "192.0.2.1",
		"[192.0.2.1]", "[IPv6:2001:db8::1]", "[ipv6:::1]", "[IPv6:::ffff:192.0.2.1]", "[x-tag:any~thing!]",
		strings.Repeat("a", 63) + ".example"}
	for _, name := range good {
		cfg := Config{Addr: "127.0.0.1:1", Helo: name}
		if err := cfg.Check(); err != nil {
			t.Errorf("Helo %q: %v", name, err)
		}
	}
	f := &fakeServer{}
	addr := f.start(t)
	for _, name := range []string{"my_host.test", "[IPv6:2001:db8::1]"} {
		if res, err := Run(context.Background(), Config{Addr: addr, Helo: name}); err != nil || res.Delivered != 1 {
			t.Fatalf("Helo %q: %+v %v", name, res, err)
		}
	}
	var ehlo []string
	for _, c := range f.commands() {
		if strings.HasPrefix(c, "EHLO") {
			ehlo = append(ehlo, c)
		}
	}
	if want := []string{"EHLO my_host.test", "EHLO [IPv6:2001:db8::1]"}; !slices.Equal(ehlo, want) {
		t.Errorf("sent %q, want %q", ehlo, want)
	}
}

// The messages of -F are held in memory, at most MaxLength bytes of
// files together: a file larger (a sparse one here, refused by its size
// without a read), files that add up to more, or a device that never
// ends (/dev/zero: it ran out of memory) are ErrMessagesTooLarge.
func TestLoadMessagesBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxLength+1); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMessages(big); !errors.Is(err, ErrMessagesTooLarge) {
		t.Errorf("a file of MaxLength+1 bytes: %v", err)
	}
	several := filepath.Join(dir, "several")
	os.Mkdir(several, 0o755)
	for _, name := range []string{"1", "2", "3"} {
		os.WriteFile(filepath.Join(several, name), bytes.Repeat([]byte("x"), 100), 0o644)
	}
	if msgs, err := loadMessages(several, 300, readChunk, false); err != nil || len(msgs) != 3 {
		t.Errorf("300 bytes in 3 files, at most 300: %d messages, %v", len(msgs), err)
	}
	if _, err := loadMessages(several, 299, readChunk, false); !errors.Is(err, ErrMessagesTooLarge) {
		t.Errorf("300 bytes in 3 files, at most 299: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := loadMessages("/dev/zero", 1<<20, readChunk, false); !errors.Is(err, ErrMessagesTooLarge) {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	loadPipePieces(t)
}

// A device that never ends is refused once it passes the bound, having
// held little more than the bound: it was read into a bytes.Buffer that
// doubled, allocating 4 times the bound on the way (4 GiB for -F
// /dev/zero).
func TestLoadMessagesDeviceMemory(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	const limit = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := loadMessages("/dev/zero", limit, readChunk, false)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrMessagesTooLarge) {
		t.Fatalf("/dev/zero: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit+limit/2 {
		t.Errorf("/dev/zero at most %d bytes: allocated %d bytes", limit, got)
	}
}

// loadPipePieces: a pipe is read in pieces and joined whole, the bound
// counting every piece: exactly the bound is taken, one byte more
// refused.
func loadPipePieces(t *testing.T) {
	if _, err := os.Stat("/dev/fd"); err != nil {
		t.Skip("no /dev/fd")
	}
	msg := bytes.Repeat([]byte("Subject: pieces\r\n"), 10) // 170 bytes
	for _, tc := range []struct {
		limit int64
		ok    bool
	}{{int64(len(msg)), true}, {int64(len(msg)) - 1, false}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w.Write(msg)
			w.Close()
		}()
		msgs, err := loadMessages(fmt.Sprintf("/dev/fd/%d", r.Fd()), tc.limit, 7, false)
		r.Close()
		switch {
		case tc.ok && (err != nil || len(msgs) != 1 || !bytes.Equal(msgs[0], msg)):
			t.Errorf("limit %d: %q, %v; want the message", tc.limit, msgs, err)
		case !tc.ok && !errors.Is(err, ErrMessagesTooLarge):
			t.Errorf("limit %d: %v; want ErrMessagesTooLarge", tc.limit, err)
		}
	}
}

// LoadMessages gives the messages as the files hold them (loadMessages
// without crlf) with their lines ended as Run ends them (crlfLines), for files, directories and mboxes of random
// lines: CRLF or LF ends, bare CRs, ">From " lines, with room in the
// buffer read for the CRs or without (many short LF lines), and through
// a pipe (no room).
func TestLoadMessagesCRLF(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bc", ".", "\r", "\n", "\r\n", "\n\n", "\r\n\r\n", ">From x", "From y\n", "From z\r\n", strings.Repeat("x", 200)}
	for i := range 400 {
		var b strings.Builder
		if i%2 == 0 {
			b.WriteString("From a\n")
		}
		for range rng.IntN(60) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "m")
		os.WriteFile(file, []byte(b.String()), 0o644)
		if i%3 == 0 {
			os.WriteFile(filepath.Join(dir, "n"), []byte(strings.Repeat("q\n", i+1)), 0o644)
		}
		for _, path := range []string{file, dir} {
			want, wantErr := loadMessages(path, MaxLength, readChunk, false)
			got, err := LoadMessages(path)
			if (err == nil) != (wantErr == nil) || len(got) != len(want) {
				t.Fatalf("%q: %d messages, %v; as the files hold them: %d, %v", b.String(), len(got), err, len(want), wantErr)
			}
			for k := range want {
				if w := crlfLines(want[k]); !bytes.Equal(got[k], w) || !crlfOnly(got[k]) {
					t.Fatalf("%q: message %d %q, want %q", b.String(), k, got[k], w)
				}
			}
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write([]byte("From a\nx\n\nFrom b\ny\r")); w.Close() }()
	defer r.Close()
	got, err := loadMessages(fmt.Sprintf("/dev/fd/%d", r.Fd()), 1<<20, 3, true)
	if err != nil || len(got) != 2 || string(got[0]) != "x\r\n" || string(got[1]) != "y \r\n" {
		t.Errorf("a pipe: %q, %v", got, err)
	}
}

// TestLoadMessagesCRLFMemory: smtp-source -F on an mbox of LF lines
// (LoadMessages then Run) allocates its size about once: the file
// is read into one buffer with room for the CRs, split and CRLF-ended in
// it, and Run sends from it (1.03 N more allocated going from N to 2N
// bytes). Before 2026-12-06 the mbox was read, each message appended up
// apart (SplitMbox, growing as it went), and Run made a CRLF copy: 6.66 N
// more.
func TestLoadMessagesCRLFMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	srv := startSmtpsinkCfg(t, smtpsink.Config{})
	const length = 8 << 20
	alloc := func(n int) uint64 {
		var mbox []byte
		for len(mbox) < n {
			mbox = append(mbox, "From x Thu Dec  3 10:00:00 2026\nSubject: s\n\n"...)
			for range 1000 {
				mbox = append(mbox, "a line of the body, as mail has them, under eighty characters\n"...)
			}
			mbox = append(mbox, '\n')
		}
		path := filepath.Join(t.TempDir(), "mbox")
		if err := os.WriteFile(path, mbox, 0o644); err != nil {
			t.Fatal(err)
		}
		mbox = nil
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		msgs, err := LoadMessages(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), Config{Addr: srv.Addr().String(), MessageSet: msgs, Messages: 4})
		runtime.ReadMemStats(&after)
		if err != nil || res.Delivered != 4 {
			t.Fatalf("delivered %d: %v", res.Delivered, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	one, two := alloc(length), alloc(2*length)
	copies := float64(int64(two)-int64(one)) / length
	if copies > 1.25 {
		t.Errorf("%.2f copies of the mbox", copies)
	}
	t.Logf("%.2f copies of the mbox", copies)
}
