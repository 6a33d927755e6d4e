package textproto

import (
	"bufio"
	stdtp "net/textproto"
	"reflect"
	"strings"
	"testing"
)

// TestReadMIMEHeaderAfterOpenDotReader calls ReadMIMEHeader while a
// DotReader is open. net/textproto peeks at the first byte before it
// closes the DotReader, so the byte inside the dot block decides whether
// the header's first line counts as indented. We must do the same.
func TestReadMIMEHeaderAfterOpenDotReader(t *testing.T) {
	inputs := []string{
		"line1\r\n line2\r\n.\r\nA: b\r\n\r\n",
		" x\r\n.\r\nA: b\r\n\r\n",
		"ab\r\n.\r\n indented: v\r\n\r\n",
		"\tab\r\n.\r\nKey: v\r\n\r\n",
		"abc\r\n.\r\n",
	}
	for _, in := range inputs {
		for _, pre := range []int{0, 1, 2, 3} {
			for _, size := range []int{16, 4096} {
				sr := stdtp.NewReader(bufio.NewReaderSize(strings.NewReader(in), size))
				or := NewReader(bufio.NewReaderSize(strings.NewReader(in), size))
				sd, od := sr.DotReader(), or.DotReader()
				buf := make([]byte, 1)
				for i := 0; i < pre; i++ {
					n1, e1 := sd.Read(buf)
					n2, e2 := od.Read(buf)
					if n1 != n2 || e1 != e2 {
						t.Fatalf("%q: dot Read %d: %d %v, net/textproto %d %v", in, i, n2, e2, n1, e1)
					}
				}
				h1, e1 := sr.ReadMIMEHeader()
				h2, e2 := or.ReadMIMEHeader()
				if !reflect.DeepEqual(map[string][]string(h1), map[string][]string(h2)) || stdErr(e1) != e2 {
					t.Errorf("%q after %d bytes, size %d: %v, %v; net/textproto %v, %v", in, pre, size, h2, e2, h1, e1)
				}
				l1, e1 := sr.ReadLine()
				l2, e2 := or.ReadLine()
				if l1 != l2 || e1 != e2 {
					t.Errorf("%q after %d bytes, size %d: next line %q, %v; net/textproto %q, %v", in, pre, size, l2, e2, l1, e1)
				}
			}
		}
	}
}
