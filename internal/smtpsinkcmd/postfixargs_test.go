package smtpsinkcmd

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
)

// Postfix's smtp-sink takes its address and listen backlog after the
// flags ("smtp-sink -c 127.0.0.1:2525 100", "unix:PATH 10"); so does this
// one, which then listens there. Before, the address was -addr only, and
// a Postfix command line was refused.
func TestPostfixAddressArgs(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sink.sock")
	for _, args := range [][]string{
		{"127.0.0.1:0", "100"},
		{"inet:127.0.0.1:0", "5"},
		{"127.0.0.1:0"},
		{"unix:" + sock, "10"},
		{"0", "5"}, // a port alone: every address
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := Run(ctx, append([]string{"-c"}, args...), pw, io.Discard)
				pw.Close()
				done <- err
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			br := bufio.NewReader(pr)
			first, err := br.ReadString('\n')
			go io.Copy(io.Discard, br) // the summary, at the end
			addr, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on ")
			if !ok {
				t.Fatalf("first line %q, %v", first, err)
			}
			network := "tcp"
			if a, ok := strings.CutPrefix(addr, "unix:"); ok {
				network, addr = "unix", a
			}
			if network == "unix" && addr != sock || network == "tcp" && args[0] != "0" && !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Fatalf("listening on %q (%s), want %s", addr, network, args[0])
			}
			if args[0] == "0" {
				_, port, _ := net.SplitHostPort(addr)
				addr = "127.0.0.1:" + port
			}
			c, err := net.Dial(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(l, "220 ") {
				t.Fatalf("greeting %q, %v", l, err)
			}
		})
	}
	for _, args := range [][]string{
		{"-addr", "127.0.0.1:0", "127.0.0.1:0", "5"}, // two addresses
		{"127.0.0.1:0", "many"},
		{"127.0.0.1:0", "0"},
		{"127.0.0.1:0", "5", "extra"},
		{"", "5"},
		{"inet:unix:/tmp/x.sock"},
	} {
		err := Run(context.Background(), args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 {
			t.Errorf("%q: %v (status %d), want a usage error", args, err, status)
		}
	}
}

// The forms of Postfix's address that net.Listen takes otherwise.
func TestPostfixAddr(t *testing.T) {
	for in, want := range map[string]string{
		"2525":                ":2525",
		"inet:2525":           ":2525",
		"::1:2525":            "[::1]:2525",
		"inet:fe80::1:25":     "[fe80::1]:25",
		"[::1]:2525":          "[::1]:2525",
		"127.0.0.1:2525":      "127.0.0.1:2525",
		"inet:127.0.0.1:25":   "inet:127.0.0.1:25", // the prefix goes later, with -addr's
		":2525":               ":2525",
		"localhost:smtp":      "localhost:smtp",
		"unix:/run/sink.sock": "unix:/run/sink.sock",
		"":                    "",
	} {
		if got := postfixAddr(in); got != want {
			t.Errorf("postfixAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
