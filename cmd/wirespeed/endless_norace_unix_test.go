//go:build unix && !race

package main

import "testing"

// The lists' bound, 256 MiB, is read twice here: seconds under the race
// detector, so this runs without it (CI's purego pass). tcpperf merge's
// latency logs, bounded at 1 GiB, are not tried: ReadFileMax is
// TestReadPEM's.
func TestEndlessLists(t *testing.T) {
	testEndless(t, [][]string{
		{"smtp-source", "-to-file", "/dev/zero", "127.0.0.1:25"},
		{"smtp-source", "-from-file", "/dev/zero", "127.0.0.1:25"},
	})
}
