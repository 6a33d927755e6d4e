package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// modeOracle decodes in with one call to a dot.Decoder (package dot tests
// the Decoder against an independent model) and returns the data, the final
// error, and the rest of the input. A block cut short after a problem with
// its data fails a dot reader with an error matching both, the problem
// first; the Decoder returns io.ErrUnexpectedEOF alone (and the problem
// from Err).
func modeOracle(mode dot.Mode, max int64, in []byte) ([]byte, error, []byte) {
	d := dot.Decoder{Mode: mode, MaxSize: max}
	dst := make([]byte, 2*len(in)+2)
	n, ns, err := d.Transform(dst, in, true)
	if err == io.EOF {
		err = nil
	}
	if derr := d.Err(); err == io.ErrUnexpectedEOF && derr != nil {
		errs := []error{derr}
		if m, ok := derr.(interface{ Unwrap() []error }); ok {
			errs = m.Unwrap()
		}
		err = &chunkErrors{append(errs[:len(errs):len(errs)], err)}
	}
	return dst[:n], err, in[ns:]
}

// sameError reports whether a and b say the same: the same text, and each
// matching the same of dot's errors and io.ErrUnexpectedEOF.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Error() != b.Error() {
		return false
	}
	for _, k := range []error{dot.ErrTooLarge, dot.ErrLineTooLong, dot.ErrBareLF, dot.ErrBareCR, io.ErrUnexpectedEOF} {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	return true
}

// checkModeSession reads one block in mode through a Reader over in, with
// Read calls of readLen bytes (0: io.Copy), then reads what follows it
// directly from the bufio.Reader, and compares with the oracle.
func checkModeSession(t *testing.T, mode dot.Mode, max int64, in []byte, chunk, bufSize, readLen int) {
	t.Helper()
	want, wantErr, wantRest := modeOracle(mode, max, in)
	br := bufio.NewReaderSize(&chunkReader{data: in, n: chunk}, bufSize)
	r := NewReader(br)
	r.SetLimits(Limits{MaxDotBytes: max})
	d := r.DotReaderMode(mode)
	var got []byte
	var err error
	if readLen == 0 {
		var buf bytes.Buffer
		_, err = io.Copy(&buf, d)
		got = buf.Bytes()
	} else {
		b := make([]byte, readLen)
		for i := 0; ; i++ {
			if i > 2*len(in)+10 {
				t.Fatalf("%v %q read=%d: no end", mode, in, readLen)
			}
			n, rerr := d.Read(b)
			got = append(got, b[:n]...)
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				err = rerr
				break
			}
		}
	}
	rest, _ := io.ReadAll(br)
	where := fmt.Sprintf("%v max=%d %q chunk=%d buf=%d read=%d", mode, max, in, chunk, bufSize, readLen)
	if !bytes.Equal(got, want) || !sameError(err, wantErr) || !bytes.Equal(rest, wantRest) {
		t.Fatalf("%s:\n got %q, %v, rest %q\nwant %q, %v, rest %q", where, got, err, rest, want, wantErr, wantRest)
	}
}

func TestDotReaderModes(t *testing.T) {
	for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
		for _, in := range dotInputs {
			for _, max := range []int64{0, 3} {
				for _, chunk := range []int{1, 3, 4096} {
					for _, readLen := range []int{1, 2, 3, 7, 64, 0} {
						checkModeSession(t, mode, max, []byte(in), chunk, 16, readLen)
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 2000; i++ {
		in := randomDotInput(r, r.IntN(60))
		if r.IntN(2) == 0 {
			in = append(in, "\r\n.\r\nNEXT\r\n"...)
		}
		checkModeSession(t, dot.Mode(1+r.IntN(2)), int64(r.IntN(3)*r.IntN(30)), in, 1+r.IntN(8), 16+r.IntN(8), r.IntN(9))
	}
}

// TestDotReaderRawLarge puts CRLFs on every byte position around the 32 KiB
// buffer of WriteTo and the end of Read buffers.
func TestDotReaderRawLarge(t *testing.T) {
	for _, lineLen := range []int{1, 2, 3, 63, 64, 65, 1000, 32767, 32768} {
		var in []byte
		for len(in) < 100<<10 {
			in = append(in, bytes.Repeat([]byte{'x'}, lineLen)...)
			in = append(in, "\r\n"...)
		}
		in = append(in, ".\r\nNEXT\r\n"...)
		for _, readLen := range []int{0, 1, 4095, 4096, 32 << 10} {
			checkModeSession(t, dot.Raw, 0, in, 4096, 4096, readLen)
		}
	}
}

// TestDotReaderRawClose: another Reader method drains a Raw block.
func TestDotReaderRawClose(t *testing.T) {
	in := bytes.Repeat([]byte("abc\r\n"), 20000)
	in = append(in, ".\r\nNEXT\r\n"...)
	r := NewReader(bufio.NewReader(bytes.NewReader(in)))
	d := r.DotReaderMode(dot.Raw)
	d.Read(make([]byte, 1))
	if line, err := r.ReadLine(); line != "NEXT" || err != nil {
		t.Fatalf("%q %v", line, err)
	}
}
