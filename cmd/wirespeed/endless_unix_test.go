//go:build unix

package main

import (
	"strings"
	"testing"
)

// A file flag naming something that never ends (/dev/zero here; a pipe
// left open) is refused past a bound, by every command that reads one,
// instead of read until memory runs out: 16 MiB for TLS files and users,
// 256 MiB for lists of addresses (TestEndlessLists), 1 GiB for latency
// logs.
func TestEndlessFiles(t *testing.T) {
	testEndless(t, [][]string{
		{"smtp-sink", "-addr", "127.0.0.1:0", "-tls", "-tls-cert", "/dev/zero", "-tls-key", "/dev/zero"},
		{"smtp-sink", "-addr", "127.0.0.1:0", "-tls", "-tls-client-ca", "/dev/zero"},
		{"smtp-source", "-tls", "-tls-ca", "/dev/zero", "127.0.0.1:25"},
		{"smtp-source", "-tls", "-tls-insecure", "-tls-cert", "/dev/zero", "-tls-key", "/dev/zero", "127.0.0.1:25"},
		{"tcpperf", "-tls", "-tls-ca", "/dev/zero", "-addr", "127.0.0.1:1"},
		{"serve", "-addr", "127.0.0.1:0", "-tls", "-tls-cert", "/dev/zero", "-tls-key", "/dev/zero"},
		{"smtp-sink", "-addr", "127.0.0.1:0", "-tls", "-auth", "-auth-file", "/dev/zero"},
	})
}

func testEndless(t *testing.T, cmds [][]string) {
	t.Helper()
	for _, args := range cmds {
		status, _, stderr := runMain(args...)
		if status != 1 || !strings.Contains(stderr, "/dev/zero: more than ") {
			t.Errorf("%q: status %d, %s", args, status, stderr)
		}
	}
}
