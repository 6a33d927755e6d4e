// Package tooltest finds the external programs that wirespeed's tests
// compare it with (coreutils' md5sum, sockperf). A missing program skips
// the test on a developer's machine, and fails it when CI=true, because CI
// installs every program the tests use. It also bounds the fuzzer's
// minimizing for fuzz targets whose calls are slow (LimitMinimizing),
// picks ports for servers that bind them by number (FreePort), says
// whether the host has IPv6 (IPv6), gives
// an address where a TCP connect is refused (RefusingAddr), a buffer a
// test reads while another goroutine writes it (Buffer), and a writer
// that fails after so many bytes (FailingWriter).
package tooltest

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Path returns the path of the program name, or ends the test: Skip, or
// Fatal under CI=true.
func Path(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, "%s not installed: %v", name, err)
	}
	return path
}

// Unavailable ends the test because what it compares with is not here:
// it skips, or fails under CI=true.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}

// IPv6 reports whether this host has IPv6 (::1 to listen on). A test
// leaves out what needs it where it has not; under CI=true, whose hosts
// have it, the test fails.
func IPv6(t testing.TB) bool {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Errorf("CI=true: no IPv6 here: %v", err)
		} else {
			t.Logf("no IPv6 here, its cases left out: %v", err)
		}
		return false
	}
	ln.Close()
	return true
}

// LimitMinimizing caps the fuzzer's minimizing of each input it finds to
// runs calls of the fuzz function, unless -fuzzminimizetime is given.
// Go minimizes a []byte that brings new coverage by trying to remove
// each of its byte ranges, a number of calls that grows with the square
// of its length, up to -fuzzminimizetime, 60 s by default. Where a
// call costs a millisecond or more (a session over TCP), an input of a
// few hundred bytes takes all of it: the fuzzer reports 0 execs/sec meanwhile (a
// worker's calls are counted when its minimizing ends), and at the
// minute the coordinator kills the worker, its calls uncounted and its
// work lost, and keeps the input as found (golang/go#48820). A count
// keeps the passes that cut the most (the tail, then single bytes) and
// is the same on any machine.
func LimitMinimizing(f *testing.F, runs int) {
	if fz := flag.Lookup("test.fuzz"); fz == nil || fz.Value.String() == "" {
		return // not fuzzing
	}
	given := false
	flag.Visit(func(fl *flag.Flag) { given = given || fl.Name == "test.fuzzminimizetime" })
	if given {
		return
	}
	if err := flag.Set("test.fuzzminimizetime", fmt.Sprintf("%dx", runs)); err != nil {
		f.Fatal(err)
	}
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago, for a
// server that is told its port by number (a script's, Exim, Postfix).
// The port lies below the kernel's ephemeral range: one in it (what port
// 0 gives) may be taken before the server binds it by any connection a
// client makes, and other packages' tests make thousands at the same
// time.
func FreePort() (int, error) {
	low := 32768 // Linux's default start of net.ipv4.ip_local_port_range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	for range 100 {
		port := 1024 + rand.IntN(low-1024)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // taken
		}
		ln.Close()
		return port, nil
	}
	return 0, errors.New("no free port below the ephemeral range")
}
