package netio

import (
	"errors"
	"net"
	"runtime"
	"testing"
)

func TestTuning(t *testing.T) {
	cli, _ := tcpPair(t)
	c := NewConn(cli, nil) // helpers see through a Conn
	for _, on := range []bool{false, true} {
		if err := SetNoDelay(c, on); err != nil {
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
	if err := SetSendBuffer(c, 96<<10); err != nil {
		t.Fatal(err)
	}
	if err := SetRecvBuffer(c, 80<<10); err != nil {
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
	o, err := GetSockOpts(c)
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
	p1, _ := net.Pipe()
	defer p1.Close()
	if err := SetNoDelay(p1, true); !errors.Is(err, ErrNoSyscallConn) {
		t.Fatalf("net.Pipe: %v, want ErrNoSyscallConn", err)
	}
}
