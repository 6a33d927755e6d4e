//go:build unix && !race

package main

import "testing"

// The lists' bound, 256 MiB, is read three times here: seconds under the
// race detector, so this runs without it (CI's purego pass).
func TestEndlessLists(t *testing.T) {
	testEndless(t, [][]string{
		{"smtp-source", "-to-file", "/dev/zero", "127.0.0.1:25"},
		{"smtp-source", "-from-file", "/dev/zero", "127.0.0.1:25"},
		{"tcpperf", "merge", "/dev/zero"},
	})
}
