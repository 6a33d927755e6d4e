package cli

import (
	"errors"
	"io/fs"
	"os"
)

// An Output is a file a command writes a run's results to. It is opened
// before the run, so that a path that cannot be written fails first, but
// emptied only at its first Write: a run that fails before writing leaves
// an earlier run's file as it was, and makes none.
type Output struct {
	f       *os.File
	made    bool // the file did not exist before
	begun   bool // written to
	regular bool // a regular file, which the first Write truncates (not /dev/stdout)
}

// CreateOutput opens path for writing, creating it if need be, without
// truncating it.
func CreateOutput(path string) (*Output, error) {
	_, err := os.Stat(path)
	made := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Output{f: f, made: made, regular: fi.Mode().IsRegular()}, nil
}

// Write writes p, having emptied the file at the first call.
func (o *Output) Write(p []byte) (int, error) {
	if !o.begun {
		o.begun = true
		if o.regular {
			if err := o.f.Truncate(0); err != nil {
				return 0, err
			}
		}
	}
	return o.f.Write(p)
}

// Name returns the file's path.
func (o *Output) Name() string { return o.f.Name() }

// Close closes the file, and removes it if it was made for a run that
// wrote nothing to it. It may be called more than once; the later calls
// return an error.
func (o *Output) Close() error {
	err := o.f.Close()
	if o.made && !o.begun {
		os.Remove(o.f.Name())
	}
	return err
}

// Abort closes the file after a failed run and removes what the run left:
// the file if the run made it or wrote to it. An earlier run's file it
// did not write to stays as it was, and so does anything but a regular
// file (-plot /dev/full is not removed).
func (o *Output) Abort() {
	o.f.Close()
	if o.regular && (o.made || o.begun) {
		os.Remove(o.f.Name())
	}
}
