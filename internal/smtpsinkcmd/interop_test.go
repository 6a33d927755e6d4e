package smtpsinkcmd

import (
	"crypto/md5"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The command against clients nobody here wrote: swaks's messages are
// logged with the digest of the data it was given, and Postfix's
// smtp-source, in SMTP and LMTP, gets no error reply.
func TestRunInterop(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	source := tooltest.Path(t, "smtp-source")
	for _, lmtp := range []bool{false, true} {
		var flags, swaksProto, sourceL []string
		if lmtp {
			flags, swaksProto, sourceL = []string{"-L"}, []string{"--protocol", "LMTP"}, []string{"-L"}
		}
		addr, stop := run(t, append(flags, "-digest", "md5")...)
		data := "Subject: cli\n\nbody\n.dot\n"
		for range 3 {
			args := append([]string{"--server", addr, "--to", "a@b.test", "--data", data, "--pipeline"}, swaksProto...)
			if out, err := exec.Command(swaks, args...).CombinedOutput(); err != nil {
				t.Fatalf("swaks: %v\n%s", err, out)
			}
		}
		args := append([]string{"-s", "2", "-m", "20", "-l", "4096", "-d"}, sourceL...)
		if out, err := exec.Command(source, append(args, addr)...).CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("smtp-source: %v\n%s", err, out)
		}
		out, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		// swaks ends the data with CRLF "." CRLF after what it is given.
		want := strings.ReplaceAll(data, "\n", "\r\n") + "\r\n"
		sum := md5.Sum([]byte(want))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3+20+2 {
			t.Fatalf("output:\n%s", out)
		}
		for i, l := range lines[:3] {
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != hex.EncodeToString(sum[:]) || f[1] != "30" || f[2] != []string{"1-1", "2-1", "3-1"}[i] {
				t.Errorf("swaks message %d: %q, want digest %x of %q", i+1, l, sum, want)
			}
		}
		if !strings.HasPrefix(lines[23], "sessions 5 (aborted 0), messages 23, recipients 23,") || lines[24] != "error replies 0" {
			t.Errorf("summary:\n%s", strings.Join(lines[23:], "\n"))
		}
	}
}
