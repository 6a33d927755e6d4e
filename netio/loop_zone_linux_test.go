package netio

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// zoneChildEnv marks the run of the test binary that linkLocal starts in
// a network namespace of its own.
const zoneChildEnv = "NETIO_TEST_LINK_LOCAL_NETNS"

// linkLocal returns an IPv6 link-local address of this host that a
// socket can be bound to, its zone the interface's name. Where no
// interface has one, it runs the calling test again in a new network
// namespace (unshare -n; root), whose lo it gives fe80::1, and reports
// that it did (done): the test has passed there, or failed here (it is
// skipped without root, unshare or ip, and fails so under CI=true, where
// .ci/run runs as root with both).
func linkLocal(t *testing.T) (ip netip.Addr, done bool) {
	t.Helper()
	child := os.Getenv(zoneChildEnv) == "1"
	if child {
		ip := tooltest.Path(t, "ip")
		for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", "fe80::1/64", "dev", "lo", "nodad"}} {
			if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v in the test's namespace: %v: %s", args, err, out)
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok || !ip.Is6() || !ip.IsLinkLocalUnicast() {
				continue
			}
			ip = ip.WithZone(ifi.Name)
			// A tentative address (duplicate address detection under
			// way) cannot be bound yet: look for another.
			if ln, err := net.Listen("tcp6", netip.AddrPortFrom(ip, 0).String()); err == nil {
				ln.Close()
				return ip, false
			}
		}
	}
	if child {
		t.Fatal("no link-local address in the test's namespace, fe80::1 on lo added")
	}
	if os.Geteuid() != 0 {
		tooltest.Unavailable(t, "no interface has an IPv6 link-local address, and a network namespace with one needs root (uid %d)", os.Geteuid())
	}
	unshare := tooltest.Path(t, "unshare")
	tooltest.Path(t, "ip")
	cmd := exec.Command(unshare, "-n", "--", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), zoneChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a network namespace of its own: %v\n%s", t.Name(), err, out)
	}
	t.Logf("passed in a network namespace of its own, fe80::1 on lo:\n%s", out)
	return netip.Addr{}, true
}

// TestLoopsLinkLocalZone: the addresses of a connection over IPv6
// link-local addresses name their zone as package net's do, by the
// interface's name ("fe80::1%lo"), for an accepted connection and a
// dialed one, its address spelt with the interface's name or index. The
// epoll loops named it by the interface's index ("fe80::1%1").
func TestLoopsLinkLocalZone(t *testing.T) {
	ip, done := linkLocal(t)
	if done {
		return
	}
	ln, err := net.ListenTCP("tcp6", net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		t.Fatal(err)
	}
	// The zone as given: a listener's address has none.
	lnAddr := netip.AddrPortFrom(ip, uint16(ln.Addr().(*net.TCPAddr).Port)).String()
	addrs := make(chan [2]string, 1)
	s := serveOn(t, ln, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) {
		addrs <- [2]string{c.RemoteAddr().String(), c.LocalAddr().String()}
	}})
	c, err := net.Dial("tcp6", lnAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// What net says of the same connection, from its other end.
	if got, want := <-addrs, [2]string{c.LocalAddr().String(), c.RemoteAddr().String()}; got != want {
		t.Errorf("accepted: RemoteAddr %s, LocalAddr %s; want %s, %s, as net's", got[0], got[1], want[0], want[1])
	}

	peer, err := net.ListenTCP("tcp6", net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	port := peer.Addr().(*net.TCPAddr).Port
	ifi, err := net.InterfaceByName(ip.Zone())
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{ip.Zone(), strconv.Itoa(ifi.Index)} {
		address := net.JoinHostPort(ip.WithZone("").String()+"%"+zone, strconv.Itoa(port))
		nc, err := net.Dial("tcp6", address)
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
		pc0, err := peer.Accept()
		if err != nil {
			t.Fatal(err)
		}
		pc0.Close()
		lc, err := s.Dial(context.Background(), "tcp6", address)
		if err != nil {
			t.Fatal(err)
		}
		<-addrs
		pc, err := peer.Accept()
		if err != nil {
			t.Fatal(err)
		}
		got := [2]string{lc.RemoteAddr().String(), lc.LocalAddr().String()}
		want := [2]string{pc.LocalAddr().String(), pc.RemoteAddr().String()}
		if got != want || got[0] != nc.RemoteAddr().String() {
			t.Errorf("Dial(%q): RemoteAddr %s, LocalAddr %s; want %s, %s, as net's (net's Dial: RemoteAddr %s)", address, got[0], got[1], want[0], want[1], nc.RemoteAddr())
		}
		pc.Close()
		lc.Do(func(c *LoopConn) { c.Close() })
	}
}
