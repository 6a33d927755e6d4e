package dot_test

import (
	"errors"
	"fmt"

	"github.com/wirespeed/wirespeed/dot"
)

// A server that takes data as go-smtp does keeps bare CRs and LFs; one
// that takes it as Postfix's smtpd_forbid_bare_newline = normalize does
// ends lines at a bare LF. Neither ends the data at "\n.\n".
func ExampleBarePolicy() {
	wire := []byte("a\rb\nc\n.\nd\r\n.\r\n")
	for _, p := range []dot.BarePolicy{dot.BareReject, dot.BareKeep, dot.BareNormalize} {
		d := dot.Decoder{Mode: dot.Raw, Bare: p}
		dst := make([]byte, 64)
		n, _, err := d.Transform(dst, wire, true)
		fmt.Printf("%v: %q %v\n", p, dst[:n], err)
	}
	// Output:
	// reject: "a" dot: bare LF at offset 3; dot: bare CR at offset 1
	// keep: "a\rb\nc\n.\nd\r\n" EOF
	// normalize: "a\rb\r\nc\r\n\r\nd\r\n" EOF
}

func ExampleBarePolicy_String() {
	fmt.Println(dot.BareReject, dot.BareKeep, dot.BareNormalize)
	// Output:
	// reject keep normalize
}

// MaxLine 998 is RFC 5321's limit. A longer line is reported after the
// block, with every other problem found in it, the size first.
func ExampleDecoder_maxLine() {
	d := dot.Decoder{Mode: dot.Strict, MaxLine: 3, MaxSize: 5}
	dst := make([]byte, 64)
	n, nSrc, err := d.Transform(dst, []byte("abc\r\nlong\r\nxyz\r\n.\r\nQUIT\r\n"), false)
	fmt.Printf("%q %d %v\n", dst[:n], nSrc, err)
	fmt.Println(errors.Is(err, dot.ErrTooLarge), errors.Is(err, dot.ErrLineTooLong))
	// Output:
	// "abc\nl" 19 dot: data too large; dot: line too long
	// true true
}

// Size counts the decoded bytes of the block, which stop at MaxSize.
func ExampleDecoder_Size() {
	dst := make([]byte, 64)
	for _, max := range []int64{0, 8} {
		d := dot.Decoder{Mode: dot.Raw, MaxSize: max}
		_, _, err := d.Transform(dst, []byte("hello\r\nworld\r\n.\r\n"), false)
		fmt.Println(d.Size(), err)
	}
	// Output:
	// 14 EOF
	// 8 dot: data too large
}
