package dot_test

import (
	"fmt"

	"github.com/wirespeed/wirespeed/dot"
)

func ExampleLineState_Clean() {
	// BDAT data arrives in pieces; the state carries the line across them.
	var s dot.LineState
	fmt.Println(s.Clean([]byte("Subject: hi\r\n\r\nhel"), 998))
	fmt.Println(s.Clean([]byte("lo\r\nbare\nLF\r\n"), 998), s.Line)
	// Output:
	// 18
	// 8 4
}
