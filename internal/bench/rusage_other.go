//go:build !unix

package bench

import "os"

func rusage(*os.ProcessState) (maxRSSKiB, waits int64, ok bool) { return 0, 0, false }
