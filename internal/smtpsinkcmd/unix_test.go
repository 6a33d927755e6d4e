package smtpsinkcmd

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// -addr unix:PATH, on both engines: Go's SMTP client and swaks over LMTP
// (the common use of a Unix socket: a local delivery agent) deliver
// through the socket, every message's digest exact; the socket file is
// open to every user (0666, as Postfix's) and removed at exit; a dump
// names the client "local", as Postfix's do.
func TestRunUnixSocket(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	for _, engine := range []string{"loops", "goroutine"} {
		for _, lmtp := range []bool{false, true} {
			name := engine + "/smtp"
			if lmtp {
				name = engine + "/lmtp"
			}
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "sink")
				dumps := t.TempDir()
				args := []string{"-engine", engine, "-addr", "unix:" + path, "-digest", "md5", "-d", dumps + "/"}
				if lmtp {
					args = append(args, "-L")
				}
				addr, stop := run(t, args...)
				if addr != "unix:"+path {
					t.Fatalf("listening on %q, want unix:%s", addr, path)
				}
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o666 {
					t.Errorf("the socket's mode %v, want 0666: any user may connect, as to Postfix's", fi.Mode())
				}
				data := "Subject: unix\r\n\r\nbody\r\n"
				if lmtp {
					out, err := exec.Command(swaks, "--socket", path, "--protocol", "LMTP", "--to", "a@b.test",
						"--data", strings.ReplaceAll(data, "\r\n", "\n"), "--pipeline").CombinedOutput()
					if err != nil {
						t.Fatalf("swaks: %v\n%s", err, out)
					}
					data += "\r\n" // swaks ends the data with CRLF "." CRLF after what it is given
				} else {
					c, err := net.Dial("unix", path)
					if err != nil {
						t.Fatal(err)
					}
					if err := sendGo(c, data); err != nil {
						t.Fatal(err)
					}
				}
				out, err := stop()
				if err != nil {
					t.Fatal(err)
				}
				sum := md5.Sum([]byte(data))
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if f := strings.Fields(lines[0]); len(lines) != 3 || len(f) != 3 || f[0] != hex.EncodeToString(sum[:]) {
					t.Fatalf("output:\n%s\nwant the digest %x of %q, then the summary", out, sum, data)
				}
				if !strings.HasPrefix(lines[1], "sessions 1 (aborted 0), messages 1, recipients 1,") || lines[2] != "error replies 0" {
					t.Errorf("summary:\n%s", strings.Join(lines[1:], "\n"))
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the socket file at exit: %v, want it removed", err)
				}
				// The client's address in the dump is "local", as Postfix's.
				files, _ := filepath.Glob(filepath.Join(dumps, "*"))
				for _, f := range files {
					if b, _ := os.ReadFile(f); !strings.HasPrefix(string(b), "X-Client-Addr: local\r\n") || !strings.Contains(string(b), " ([local])\r\n") {
						t.Errorf("dump %s:\n%s", f, b)
					}
				}
				if len(files) != 1 {
					t.Errorf("%d dumps, want 1", len(files))
				}
			})
		}
	}
}

// sendGo sends one message with net/smtp over c.
func sendGo(c net.Conn, data string) error {
	cl, err := smtp.NewClient(c, "localhost")
	if err != nil {
		return err
	}
	if err := cl.Mail("s@a.test"); err != nil {
		return err
	}
	if err := cl.Rcpt("r@b.test"); err != nil {
		return err
	}
	w, err := cl.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(data)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return cl.Quit()
}

// A second sink on the unix: socket of a live one fails, saying a server
// listens there, having connected to the first once to find that out:
// the first counts one aborted session for it, besides the test's own.
func TestRunUnixSocketTaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink")
	_, stop := run(t, "-addr", "unix:"+path)
	err := Run(t.Context(), []string{"-addr", "unix:" + path}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "a server is listening on it") {
		t.Errorf("a second sink on the socket: %v, want an error saying a server is listening", err)
	}
	// The test's session follows the probe in the listen queue: once it
	// is over, the probe has been accepted.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sendGo(c, "Subject: x\r\n\r\nx\r\n"); err != nil {
		t.Fatal(err)
	}
	out, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "sessions 2 (aborted 1), messages 1,") {
		t.Errorf("the first sink's summary:\n%s\nwant 2 sessions, 1 aborted (the second sink's probe)", out)
	}
}
