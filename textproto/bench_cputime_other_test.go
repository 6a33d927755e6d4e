//go:build !unix

package textproto_test

import "time"

// processCPU is not available here: benchmarks report no CPU time.
func processCPU() time.Duration { return 0 }
