// Package cli is what wirespeed's subcommand packages share with the
// dispatcher in cmd/wirespeed: how the error a command returns becomes its
// diagnostic and exit status.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// ErrUsage marks a command-line mistake: the command exits with status 2.
var ErrUsage = errors.New("usage error")

// Usagef returns a usage error with the given message.
func Usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// Usage marks err, a library's refusal of what the command line asked for
// (a configuration error), as a usage error; errors.Is still finds what
// err matches.
func Usage(err error) error { return &usageError{msg: err.Error(), err: err} }

// FlagUsage is the usage error of err, a package's configuration error
// about the value of one flag: err's message with "cmd: flag: " in front,
// in place of the package's own prefix, pkg + ": ". errors.Is and
// errors.As still see err.
func FlagUsage(cmd, pkg, flag string, err error) error {
	msg := cmd + ": " + flag + ": " + strings.TrimPrefix(err.Error(), pkg+": ")
	return &usageError{msg: msg, err: err}
}

type usageError struct {
	msg string
	err error // what it wraps, if any
}

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }
func (e *usageError) Unwrap() error        { return e.err }

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

// Parse parses args with fs, whose Usage prints the command's synopsis
// and its flags to fs.Output(). The flags are printed when asked for
// (-help, or -h where it is not a flag), to stdout, as `wirespeed help CMD`
// prints them; after a mistake the flag package's one-line reason is
// followed by a pointer to them, not by the whole list, which would scroll
// the reason away. cmd is the command as typed, such as "wirespeed
// smtp-sink". The error is fs.Parse's, or the failed write of the help,
// for ParseError.
func Parse(fs *flag.FlagSet, args []string, cmd string, stdout io.Writer) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		out := fs.Output()
		w := &Writer{W: stdout}
		fs.SetOutput(w)
		usage()
		fs.SetOutput(out)
		if w.Err != nil {
			return &helpError{w.Err}
		}
	case err != nil:
		fmt.Fprintf(fs.Output(), "Run '%s -help' for usage.\n", cmd)
	}
	return err
}

// A helpError is a help text that could not be written.
type helpError struct{ err error }

func (e *helpError) Error() string { return "write error: " + e.err.Error() }
func (e *helpError) Unwrap() error { return e.err }

// ParseError is what a command returns when Parse (or its
// flag.FlagSet's Parse) failed with err, which has been reported: nil
// (status 0) when the user asked for help (-h, -help), a StatusError of
// 2 for a mistake, and the error itself (status 1) when the help could
// not be written.
func ParseError(err error) error {
	var he *helpError
	switch {
	case errors.As(err, &he):
		return err
	case errors.Is(err, flag.ErrHelp):
		return nil
	}
	return StatusError{Status: 2}
}

// A Writer writes to W and keeps the first error, after which it writes
// nothing: for text written piece by piece and checked once at the end.
type Writer struct {
	W   io.Writer
	Err error
}

func (w *Writer) Write(p []byte) (int, error) {
	if w.Err != nil {
		return 0, w.Err
	}
	n, err := w.W.Write(p)
	w.Err = err
	return n, err
}

// CheckHostPort returns an error saying what is wrong with addr, a TCP
// address a flag gives, if net could not use it whatever the network
// held: one net.SplitHostPort cannot split, or whose port is neither a
// number from 0 to 65535 nor a service name the system knows. An empty
// port passes (net takes it for 0). The command wraps the error in a
// usage error naming its flag.
func CheckHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return fmt.Errorf("want HOST:PORT (%s)", ae.Err)
		}
		return fmt.Errorf("want HOST:PORT")
	}
	if port == "" {
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		if digits := strings.TrimLeft(port, "+-"); digits != "" && strings.Trim(digits, "0123456789") == "" {
			return fmt.Errorf("port %s out of range (0 to 65535)", port)
		}
		return fmt.Errorf("unknown port %q (want a number from 0 to 65535 or a service name)", port)
	}
	return nil
}

// JSONError writes the one JSON object a command's -json run prints when
// it ends in err with no result to print: {"error": "..."}, with
// "interrupted": true if ctx had ended. It prints nothing for nil or a
// usage error (those print no JSON), and returns err, joined with the
// write's error if that failed.
func JSONError(ctx context.Context, w io.Writer, err error) error {
	if err == nil || errors.Is(err, ErrUsage) {
		return err
	}
	out := struct {
		Error       string `json:"error"`
		Interrupted bool   `json:"interrupted,omitempty"`
	}{err.Error(), ctx.Err() != nil}
	if jerr := json.NewEncoder(w).Encode(out); jerr != nil {
		return errors.Join(err, jerr)
	}
	return err
}

// CheckProgram checks, before a run, that prog, the value of the flag
// named flagName, is a program that can be run: a path, or a name looked
// up on PATH, as exec.Command finds it. The error names the flag. A
// program that is not (no such file, a directory, a file that is not
// executable) failed later, where the flag was not said: each child of a
// bench run ("start server: fork/exec ..."), serve's comparison engine.
func CheckProgram(flagName, prog string) error {
	_, err := exec.LookPath(prog)
	if err == nil {
		return nil
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the name is said once, below
	}
	if errors.Is(err, fs.ErrPermission) {
		if fi, serr := os.Stat(prog); serr == nil && fi.Mode().IsRegular() {
			err = fmt.Errorf("not executable (mode %v)", fi.Mode().Perm())
		}
	}
	return fmt.Errorf("%s %s: %w", flagName, prog, err)
}
