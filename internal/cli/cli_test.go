package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		print  bool
	}{
		{nil, 0, false},
		{errors.New("x"), 1, true},
		{Usagef("bad %s", "flag"), 2, true},
		{fmt.Errorf("wrapped: %w", Usagef("bad")), 2, true},
		{StatusError{Status: 1}, 1, false},
		{fmt.Errorf("wrapped: %w", StatusError{Status: 3}), 3, false},
	} {
		status, print := Status(c.err)
		if status != c.status || print != c.print {
			t.Errorf("Status(%v) = %d, %v; want %d, %v", c.err, status, print, c.status, c.print)
		}
	}
	if err := Usagef("unknown suite %q", "x"); err.Error() != `unknown suite "x"` || !errors.Is(err, ErrUsage) {
		t.Errorf("Usagef: %v", err)
	}
}

// An address net could not use, whatever the network, is refused, saying
// why; one it could is not.
func TestCheckHostPort(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{":99999", "port 99999 out of range (0 to 65535)"},
		{"127.0.0.1:65536", "port 65536 out of range"},
		{"127.0.0.1:-1", "port -1 out of range"},
		{":99999999999999999999999", "out of range"},
		{"127.0.0.1:no-such-service-wirespeed", `unknown port "no-such-service-wirespeed"`},
		{"127.0.0.1", "want HOST:PORT (missing port in address)"},
		{"::1:25", "want HOST:PORT (too many colons in address)"},
		{"[::1:25", "want HOST:PORT"},
	} {
		if err := CheckHostPort(tc.addr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckHostPort(%q) = %v, want an error saying %q", tc.addr, err, tc.want)
		}
	}
	for _, addr := range []string{":0", "127.0.0.1:25", "[::1]:65535", "localhost:", "no.such.host.invalid:25"} {
		if err := CheckHostPort(addr); err != nil {
			t.Errorf("CheckHostPort(%q) = %v, want nil", addr, err)
		}
	}
}
