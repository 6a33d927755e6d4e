package dot_test

import (
	"fmt"

	"github.com/wirespeed/wirespeed/dot"
)

// Kernel names the kernel in use, for reports such as `wirespeed bench`'s.
// The output depends on the CPU (and on the purego build tag).
func ExampleKernel() {
	fmt.Println("dot kernel:", dot.Kernel())
}
