package tcpperf

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The scheduling listener of EngineNetio: in the abstract namespace on
// Linux; elsewhere at a path in a directory of its own, which remove
// takes away. Each takes a connection.
func TestSchedListen(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		if abstract && runtime.GOOS != "linux" {
			continue
		}
		ln, remove, err := schedListen(abstract)
		if err != nil {
			t.Fatalf("abstract %v: %v", abstract, err)
		}
		addr := ln.Addr().String()
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Write([]byte("x"))
				c.Close()
			}
		}()
		c, err := net.Dial("unix", addr)
		if err != nil {
			t.Fatalf("abstract %v: dial %q: %v", abstract, addr, err)
		}
		if b, err := io.ReadAll(c); string(b) != "x" || err != nil {
			t.Fatalf("abstract %v: read %q, %v", abstract, b, err)
		}
		c.Close()
		ln.Close()
		remove()
		if abstract {
			continue
		}
		if _, err := os.Stat(filepath.Dir(addr)); !os.IsNotExist(err) {
			t.Fatalf("the listener's directory %s is left: %v", filepath.Dir(addr), err)
		}
	}
}
