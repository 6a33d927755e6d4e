// Package cli is what wirespeed's subcommand packages share with the
// dispatcher in cmd/wirespeed: how the error a command returns becomes its
// diagnostic and exit status.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
)

// ErrUsage marks a command-line mistake: the command exits with status 2.
var ErrUsage = errors.New("usage error")

// Usagef returns a usage error with the given message.
func Usagef(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// A StatusError ends a command with Status after the command has printed
// its own diagnostics (or needs none): sum's coreutils exit statuses, a
// flag-parsing error the flag package has reported, a load run that counted
// errors.
type StatusError struct{ Status int }

func (e StatusError) Error() string { return "exit status " + strconv.Itoa(e.Status) }

// Status returns the exit status for a command's error, and whether the
// error still needs printing.
func Status(err error) (status int, print bool) {
	var se StatusError
	switch {
	case err == nil:
		return 0, false
	case errors.As(err, &se):
		return se.Status, false
	case errors.Is(err, ErrUsage):
		return 2, true
	}
	return 1, true
}

// ParseError is what a command returns when its flag.FlagSet's Parse
// failed with err, which the flag package has already reported with the
// usage: nil (status 0) when the user asked for help (-h, -help), a
// StatusError of 2 for a mistake.
func ParseError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return StatusError{Status: 2}
}
