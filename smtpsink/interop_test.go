package smtpsink

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// swaks, a client nobody here wrote, sends known data, plain and
// pipelined, to SMTP and LMTP sinks: no protocol error, and the digest
// of what the sink got is that of the data swaks was given (with CRLF
// line endings and the leading dot unstuffed).
func TestSwaks(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	data := "Subject: interop\n\nline one\n.leading dot\n\n..two dots\nlast line"
	want := strings.ReplaceAll(data, "\n", "\r\n") + "\r\n"
	sum := sha256.Sum256([]byte(want))
	for _, tc := range []struct {
		name string
		cfg  Config
		args []string
	}{
		{"plain", Config{}, nil},
		{"pipeline", Config{}, []string{"--pipeline"}},
		{"lmtp", Config{LMTP: true}, []string{"--protocol", "LMTP", "--pipeline"}},
		{"helo", Config{NoESMTP: true}, []string{"--protocol", "SMTP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got messages
			tc.cfg.Digest, tc.cfg.OnMessage = digest.SHA256, got.add
			s := startSink(t, tc.cfg, hooks{})
			args := append([]string{"--server", s.Addr().String(), "--from", "s@x.test", "--to", "a@y.test,b@y.test",
				"--data", data, "--timeout", "20"}, tc.args...)
			out, err := exec.Command(swaks, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("swaks: %v\n%s", err, out)
			}
			if strings.Contains(string(out), "<** ") { // swaks marks error replies so
				t.Errorf("error reply:\n%s", out)
			}
			if tc.name != "plain" && tc.name != "helo" && !regexp.MustCompile(`-> MAIL FROM:<s@x.test>\n *-> RCPT TO:<a@y.test>\n *-> RCPT TO:<b@y.test>\n *-> DATA\n`).Match(out) {
				t.Errorf("swaks did not pipeline:\n%s", out)
			}
			ms := got.all()
			if len(ms) != 1 {
				t.Fatalf("%d messages\n%s", len(ms), out)
			}
			m := ms[0]
			if m.From != "s@x.test" || strings.Join(m.To, " ") != "a@y.test b@y.test" || m.Size != int64(len(want)) ||
				m.Digest.String() != hex.EncodeToString(sum[:]) {
				t.Errorf("got %+v digest %v; want size %d digest %x\n%s", m, m.Digest, len(want), sum, out)
			}
			if st := s.Stats(); st.ErrorCount() != 0 || st.Aborted != 0 {
				t.Errorf("stats %+v\n%s", st, out)
			}
		})
	}
}

// Postfix's smtp-source, the load generator Postfix's smtp-sink is
// measured with, over several sessions, in SMTP and LMTP, and with no
// HELO (-o): every message arrives, with no error reply and no session
// aborted.
func TestSMTPSource(t *testing.T) {
	source := tooltest.Path(t, "smtp-source")
	for _, tc := range []struct {
		name string
		cfg  Config
		args []string
	}{
		{"smtp", Config{}, nil},
		{"smtp one session per message", Config{}, nil},
		{"lmtp", Config{LMTP: true}, []string{"-L"}},
		{"sized", Config{MaxSize: 8192, MaxDataLineBytes: 998}, nil},
		{"no helo", Config{}, []string{"-o"}}, // MAIL first, as Postfix's smtp-sink takes it
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got messages
			tc.cfg.OnMessage = got.add
			s := startSink(t, tc.cfg, hooks{})
			args := append([]string{"-s", "2", "-m", "20", "-l", "4096", "-r", "3"}, tc.args...)
			if !strings.Contains(tc.name, "per message") {
				args = append(args, "-d")
			}
			args = append(args, s.Addr().String())
			out, err := exec.Command(source, args...).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Fatalf("smtp-source %v: %v\n%s", args, err, out)
			}
			st := s.Stats()
			if st.Messages != 20 || st.Recipients != 60 || st.ErrorCount() != 0 || st.Aborted != 0 {
				t.Errorf("stats %+v", st)
			}
			for _, m := range got.all() {
				if m.Size < 4096 || len(m.To) != 3 {
					t.Errorf("message %+v", m)
				}
			}
			wantSessions := uint64(2)
			if strings.Contains(tc.name, "per message") {
				wantSessions = 20
			}
			if st.Sessions != wantSessions {
				t.Errorf("%s sessions, want %d", strconv.FormatUint(st.Sessions, 10), wantSessions)
			}
		})
	}
}

// smtp-source's 1 MiB messages, which it writes with Nagle's algorithm
// on, each take many reads: the sink asks for quick ACKs once for each
// (the stall this prevents is measured, not tested: see BenchmarkSession
// and the README), and every byte arrives.
func TestSMTPSourceLarge(t *testing.T) {
	source := tooltest.Path(t, "smtp-source")
	var got messages
	var acks ackCounter
	s := startSink(t, Config{OnMessage: got.add}, hooks{ackNow: acks.hook()})
	args := []string{"-s", "2", "-m", "6", "-l", "1048576", "-d", s.Addr().String()}
	out, err := exec.Command(source, args...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("smtp-source %v: %v\n%s", args, err, out)
	}
	st := s.Stats()
	if st.Messages != 6 || st.ErrorCount() != 0 || st.Aborted != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, m := range got.all() {
		if m.Size < 1048576 {
			t.Errorf("message %+v", m)
		}
	}
	if n := acks.n.Load(); n != 6 {
		t.Errorf("%d quick-ACK requests for 6 messages of 1 MiB, want 6", n)
	}
}

// Perl's Net::SMTP (libnet, part of Perl), a client nobody here wrote,
// sends BODY=BINARYMIME in BDAT chunks, the only way it uses CHUNKING:
// binary data with NULs, bare CR and LF and an embedded CRLF "." CRLF
// arrives unchanged. (Net::SMTP speaks SMTP only; TestBDATLMTP covers
// LMTP.)
func TestNetSMTPBDAT(t *testing.T) {
	perl := tooltest.Path(t, "perl")
	if out, err := exec.Command(perl, "-MNet::SMTP", "-e", "exit(Net::SMTP->can('bdatlast') ? 0 : 1)").CombinedOutput(); err != nil {
		tooltest.Unavailable(t, "perl's Net::SMTP has no bdatlast: %v %s", err, out)
	}
	var data []byte
	for i := range 70000 {
		data = append(data, byte(i*7), byte(i))
	}
	data = append(data, "\r\n.\r\n\n.\n\r"...)
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Chunks of 0, 1, 4096 and 65537 bytes, then the rest with LAST.
	script := `
use strict; use Net::SMTP;
my ($addr, $path) = @ARGV;
open(my $f, '<:raw', $path) or die; local $/; my $d = <$f>;
my $s = Net::SMTP->new($addr, Hello => 'perl.test', Timeout => 20) or die "connect: $@";
$s->mail('p@perl.test', Bits => 'binary') or die "MAIL: " . $s->message;
$s->to('a@b.test', 'c@d.test') or die "RCPT: " . $s->message;
my $off = 0;
for my $n (0, 1, 4096, 65537) { $s->bdat(substr($d, $off, $n)) or die "BDAT $n: " . $s->message; $off += $n; }
$s->bdatlast(substr($d, $off)) or die "BDAT LAST: " . $s->code . " " . $s->message;
$s->quit or die "QUIT";
`
	var got messages
	s := startSink(t, Config{Digest: digest.SHA256, OnMessage: got.add}, hooks{})
	out, err := exec.Command(perl, "-e", script, s.Addr().String(), path).CombinedOutput()
	if err != nil {
		t.Fatalf("perl: %v\n%s", err, out)
	}
	ms := got.all()
	sum := sha256.Sum256(data)
	if len(ms) != 1 || ms[0].Size != int64(len(data)) || ms[0].Chunks != 5 || ms[0].Body != "BINARYMIME" ||
		ms[0].Digest.String() != hex.EncodeToString(sum[:]) {
		t.Errorf("messages %+v, want %d bytes", ms, len(data))
	}
	if st := s.Stats(); st.ErrorCount() != 0 || st.Aborted != 0 {
		t.Errorf("stats %+v", st)
	}
}
