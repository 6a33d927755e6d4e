package cli

import (
	"errors"
	"fmt"
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
