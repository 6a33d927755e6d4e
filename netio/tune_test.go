package netio

import (
	"errors"
	"math"
	"runtime"
	"syscall"
	"testing"
)

// GetSockOpts reads back what the net package and SetNotSentLowat set, on
// a Conn as on the connection it wraps.
func TestTuning(t *testing.T) {
	cli, _ := tcpPair(t)
	c := NewConn(cli, nil)
	for _, on := range []bool{false, true} {
		if err := cli.SetNoDelay(on); err != nil {
			t.Fatal(err)
		}
		o, err := GetSockOpts(c)
		if err != nil {
			t.Fatal(err)
		}
		if o.NoDelay != on {
			t.Fatalf("NoDelay %v after setting %v", o.NoDelay, on)
		}
	}
	if err := cli.SetWriteBuffer(96 << 10); err != nil {
		t.Fatal(err)
	}
	if err := cli.SetReadBuffer(80 << 10); err != nil {
		t.Fatal(err)
	}
	err := SetNotSentLowat(c, 16<<10)
	if runtime.GOOS != "linux" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("SetNotSentLowat off Linux: %v", err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	o, err := GetSockOpts(cli)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel may round buffer sizes up (Linux doubles them).
	if o.SendBuffer < 96<<10 || o.RecvBuffer < 80<<10 || o.SendBuffer > 4*96<<10 {
		t.Fatalf("buffers %+v after setting 96 KiB / 80 KiB", o)
	}
	if runtime.GOOS == "linux" && o.NotSentLowat != 16<<10 {
		t.Fatalf("TCP_NOTSENT_LOWAT %d, want %d", o.NotSentLowat, 16<<10)
	}
	if runtime.GOOS == "linux" && math.MaxInt > math.MaxInt32 {
		// 1<<32 + 1024 truncated to 32 bits is 1024: refused, not set.
		wide := int64(1<<32 + 1024)
		big := int(wide) // a variable: 1<<32 does not compile where int has 32 bits
		if err := SetNotSentLowat(c, big); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("SetNotSentLowat(%d): %v, want EINVAL", big, err)
		}
		if o, err := GetSockOpts(cli); err != nil || o.NotSentLowat != 16<<10 {
			t.Fatalf("TCP_NOTSENT_LOWAT %d (%v) after a refused %d, want %d kept", o.NotSentLowat, err, big, 16<<10)
		}
	}
	p1, _ := pipe(t)
	if _, err := GetSockOpts(p1); !errors.Is(err, ErrNoSyscallConn) {
		t.Fatalf("GetSockOpts(net.Pipe): %v, want ErrNoSyscallConn", err)
	}
	if err := SetNotSentLowat(NewConn(p1, nil), 1); !errors.Is(err, ErrNoSyscallConn) && !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("SetNotSentLowat(net.Pipe): %v, want ErrNoSyscallConn", err)
	}
}
