package tcpperf

import (
	"encoding/binary"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message of level and type with data.
func cmsg(level, typ int, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	if unix.SizeofCmsghdr == 16 {
		binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
		binary.NativeEndian.PutUint32(b[8:], uint32(level))
		binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(unix.CmsgLen(len(data))))
		binary.NativeEndian.PutUint32(b[4:], uint32(level))
		binary.NativeEndian.PutUint32(b[8:], uint32(typ))
	}
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// zeroLen returns a copy of the control message b with a length of 0.
func zeroLen(b []byte) []byte {
	b = append([]byte(nil), b...)
	clear(b[:unix.SizeofCmsghdr/2])
	return b
}

func timespec(sec, nsec int64) []byte {
	return binary.NativeEndian.AppendUint64(binary.NativeEndian.AppendUint64(nil, uint64(sec)), uint64(nsec))
}

// TestRxTimeParse: the timestamp is found after another control message,
// and truncated, foreign or empty messages give none.
func TestRxTimeParse(t *testing.T) {
	ts := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec(1700000000, 123456789))
	other := cmsg(unix.SOL_IP, unix.IP_TOS, []byte{1, 0, 0, 0})
	for _, tc := range []struct {
		name string
		oob  []byte
		want int64
		ok   bool
	}{
		{"alone", ts, 1700000000123456789, true},
		{"after another", append(append([]byte(nil), other...), ts...), 1700000000123456789, true},
		{"none", nil, 0, false},
		{"foreign", other, 0, false},
		{"truncated", ts[:len(ts)-1], 0, false},
		{"header only", ts[:unix.SizeofCmsghdr-1], 0, false},
		{"length below the header's", zeroLen(ts), 0, false},
		{"zero", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec(0, 0)), 0, false},
		{"short data", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, []byte{1, 2, 3, 4}), 0, false},
	} {
		got, ok := rxTime(tc.oob)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRxTimeKernel: on a real TCP socket the kernel's timestamp of a
// message lies between its write and its read, on the Unix clock, and the
// loop's recvmsg (timedRecv) allocates nothing.
func TestRxTimeKernel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	rc.Control(func(fd uintptr) { serr = enableRxTime(int(fd)) })
	if serr != nil {
		t.Fatal(serr)
	}
	// The kernel turns timestamps on through a work queue: the first
	// packets after enableRxTime may have none. It is given a minute, a
	// guard against a hang (a thousand tries of a millisecond were a
	// second, which a loaded machine's work queue may take).
	buf, oob := make([]byte, 64), make([]byte, rxTimeSpace)
	var tr timedRecv
	deadline := time.Now().Add(time.Minute)
	for try := 0; ; try++ {
		before := time.Now().UnixNano()
		if _, err := s.Write([]byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		var n, oobn int
		var rerr error
		rc.Read(func(fd uintptr) bool {
			n, oobn, rerr = tr.recv(int(fd), buf, oob)
			return rerr != unix.EAGAIN
		})
		after := time.Now().UnixNano()
		if rerr != nil || string(buf[:n]) != "hello\n" {
			t.Fatalf("recvmsg: %q %v", buf[:n], rerr)
		}
		at, ok := rxTime(oob[:oobn])
		if !ok && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			continue
		}
		if !ok || at < before || at > after {
			t.Fatalf("timestamp %d (found %v after %d tries), want within the write's %d and the read's %d", at, ok, try, before, after)
		}
		break
	}
	x := []byte("x")
	rc.Control(func(fd uintptr) {
		allocs := testing.AllocsPerRun(100, func() {
			s.Write(x)
			tr.recv(int(fd), buf, oob)
		})
		if allocs != 0 {
			t.Errorf("%v allocations a write and recvmsg, want 0", allocs)
		}
	})
}

// TestSleepUntil: the raw sleep does not end before its time unless a
// signal ends it, and then it says so (the runtime signals threads, for
// a garbage collection's preemption for one).
func TestSleepUntil(t *testing.T) {
	for range 20 {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		target := ts.Nano() + int64(2*time.Millisecond)
		interrupted := sleepUntil(target)
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		if interrupted {
			continue
		}
		if ts.Nano() < target {
			t.Fatalf("woke %dns early, not interrupted", target-ts.Nano())
		}
		return
	}
	t.Fatal("every sleep was interrupted")
}
