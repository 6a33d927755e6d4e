//go:build unix

package cli

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// ListenError names the flag for a failure to listen that is about the
// address, with exit status 2 where no run can listen there and 1 where
// the environment must change; other failures it leaves alone. The
// errors are net's own where this host can make them.
func TestListenError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	listen := func(t *testing.T, network, addr string) error {
		t.Helper()
		ln, err := net.Listen(network, addr)
		if err == nil {
			ln.Close()
			t.Skipf("listened on %s %s", network, addr)
		}
		return err
	}
	sock := func(call string, errno syscall.Errno) error {
		return &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError(call, errno)}
	}
	for _, c := range []struct {
		name   string
		err    func(*testing.T) error
		status int // 0: left alone
		says   string
	}{
		{"no such host", func(t *testing.T) error { return listen(t, "tcp", "no such host.invalid:0") }, 2, "no such host"},
		{"no DNS server", func(t *testing.T) error {
			return &net.OpError{Op: "listen", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "x.example", IsTemporary: true}}
		}, 1, "server misbehaving"},
		{"no address of the family", func(t *testing.T) error { return listen(t, "tcp4", "[::1]:0") }, 2, "no suitable address"},
		{"in use", func(t *testing.T) error { return listen(t, "tcp", busy.Addr().String()) }, 1, "bind: address already in use"},
		{"link-local without a zone", func(t *testing.T) error {
			if !tooltest.IPv6(t) {
				t.SkipNow()
			}
			return listen(t, "tcp", "[fe80::1]:0")
		}, 2, "bind: "},
		{"unix path too long", func(t *testing.T) error { return listen(t, "unix", "/tmp/"+strings.Repeat("x", 200)) }, 2, "bind: invalid argument"},
		{"unix missing directory", func(t *testing.T) error {
			return listen(t, "unix", filepath.Join(t.TempDir(), "missing", "s"))
		}, 1, "bind: no such file or directory"},
		{"not this host's", func(t *testing.T) error { return sock("bind", syscall.EADDRNOTAVAIL) }, 2, "cannot assign requested address"},
		{"no IPv6", func(t *testing.T) error { return sock("socket", syscall.EAFNOSUPPORT) }, 2, "address family not supported"},
		{"may not bind", func(t *testing.T) error { return sock("bind", syscall.EACCES) }, 1, "permission denied"},
		{"out of descriptors", func(t *testing.T) error { return sock("socket", syscall.EMFILE) }, 0, ""},
		{"not a listen error", func(t *testing.T) error { return errors.New("netio: epoll_create: no memory") }, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.err(t)
			err := ListenError("-addr", "A:1", in)
			if c.status == 0 {
				if err != in {
					t.Errorf("ListenError(%v) = %v, want it as it was", in, err)
				}
				return
			}
			status, _ := Status(err)
			if !strings.HasPrefix(err.Error(), `-addr "A:1": `) || strings.Contains(err.Error(), "listen tcp") ||
				!strings.Contains(err.Error(), c.says) || status != c.status || errors.Is(err, ErrUsage) != (c.status == 2) ||
				!errors.Is(err, errors.Unwrap(in)) && !errors.Is(err, in) {
				t.Errorf("ListenError(%v) = %v (exit status %d), want -addr \"A:1\" in front, %q said, exit status %d, what it wraps kept", in, err, status, c.says, c.status)
			}
		})
	}
	if ListenError("-addr", "A:1", nil) != nil {
		t.Error("ListenError(nil) is not nil")
	}
}
