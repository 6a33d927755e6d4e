//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// startLoops serves h on 127.0.0.1:0 until the end of the test.
func startLoops(t testing.TB, h Handler, opt *LoopOptions) *Loops {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve(ln, h, opt)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dial(t testing.TB, s *Loops) *net.TCPConn {
	t.Helper()
	c, err := net.DialTCP("tcp", nil, s.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitSent returns once s's loops have seen all output leave: the
// portable loops learn it from a writing goroutine, which may report
// after the peer has read the output.
func waitSent(s *Loops) {
	s.Sync() // a result being taken in has been
	for s.Stats().Queued > 0 {
		s.Sync()
	}
}

// dialSmallWindow dials s with a 16 KiB receive buffer set before the
// handshake, so that the window is small from the start.
func dialSmallWindow(t testing.TB, s *Loops) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
	}}
	c, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

func echo(c *LoopConn, in []byte) int {
	if _, err := c.Write(in); err != nil || c.EOF() {
		c.Close()
	}
	return len(in)
}

// lines answers each complete line with itself, leaving a partial line
// for the next call, and closes after the peer's end of stream.
func lines(c *LoopConn, in []byte) int {
	k := bytes.LastIndexByte(in, '\n') + 1
	c.Write(in[:k])
	if c.EOF() {
		c.Close()
	}
	return k
}

// TestLoopsEcho sends random chunks on several connections spread over
// two loops at once and checks every byte comes back in order.
func TestLoopsEcho(t *testing.T) {
	s := startLoops(t, echo, &LoopOptions{Loops: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		c := dial(t, s)
		_, all := messages(uint64(i), 300, 3000)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer c.CloseWrite()
			if _, err := c.Write(all); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			got, err := io.ReadAll(c)
			if err != nil {
				t.Error(err)
			}
			if !bytes.Equal(got, all) {
				t.Errorf("conn %d: echoed %d bytes, want the %d sent", i, len(got), len(all))
			}
		}()
	}
	wg.Wait()
}

// TestLoopsSplitLines feeds lines to the line handler split at every
// point, one piece per write, so that the loop must keep the unused
// partial line across reads.
func TestLoopsSplitLines(t *testing.T) {
	s := startLoops(t, lines, nil)
	const text = "alpha\nbe\n\nlonger line three\nz\n"
	for cut := 1; cut < len(text); cut++ {
		c := dial(t, s)
		r := bufio.NewReader(c)
		for _, part := range []string{text[:cut], text[cut:]} {
			if _, err := c.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
			// Read back the lines this part completed before sending
			// the next, so that the pieces arrive in separate reads.
			want := strings.Count(text[:cut], "\n")
			if part != text[:cut] {
				want = strings.Count(text, "\n") - want
			}
			for range want {
				if _, err := r.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
		}
		c.CloseWrite()
		if rest, _ := io.ReadAll(r); len(rest) != 0 {
			t.Fatalf("cut %d: %q after the lines", cut, rest)
		}
	}
}

// TestLoopsOneWritePerCall checks that everything a Handler call writes
// leaves in one write(2): pipelined lines read together are answered
// together.
func TestLoopsOneWritePerCall(t *testing.T) {
	type call struct{ lines, out int }
	var (
		mu    sync.Mutex
		calls []call
		sends [][2]int
	)
	opt := &LoopOptions{}
	SetSentHook(opt, func(out, written int) {
		mu.Lock()
		sends = append(sends, [2]int{out, written})
		mu.Unlock()
	})
	perLine := func(c *LoopConn, in []byte) int {
		used, n := 0, 0
		for {
			k := bytes.IndexByte(in[used:], '\n')
			if k < 0 {
				break
			}
			c.Write(in[used : used+k+1]) // one Write per response
			used += k + 1
			n++
		}
		mu.Lock()
		calls = append(calls, call{n, used})
		mu.Unlock()
		return used
	}
	s := startLoops(t, perLine, opt)
	c := dial(t, s)
	req := strings.Repeat("request line\n", 16)
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(req))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != req {
		t.Fatalf("got %q", got)
	}
	s.Sync() // the hook runs once the loop has the write's result
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	var withOutput []call
	for _, cl := range calls {
		if cl.out > 0 {
			withOutput = append(withOutput, cl)
		}
	}
	if len(sends) != len(withOutput) {
		t.Fatalf("%d sends for %d Handler calls with output", len(sends), len(withOutput))
	}
	pipelined := false
	for i, sd := range sends {
		if sd[0] != withOutput[i].out || sd[1] != sd[0] {
			t.Errorf("send %d: %v for a call that wrote %d bytes", i, sd, withOutput[i].out)
		}
		pipelined = pipelined || withOutput[i].lines > 1
	}
	if !pipelined {
		t.Logf("no call saw more than one line (the loop read them one by one): %v", calls)
	}
}

// TestLoopsBackpressure: a peer that does not read its responses stops
// being read, the connection never holds more than what one Handler call
// wrote, and once the peer reads, every byte arrives.
func TestLoopsBackpressure(t *testing.T) {
	var (
		mu         sync.Mutex
		maxPending int
		readWhile  bool // the Handler was called while output waited
	)
	blocked := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{MaxQueued: 1 << 20}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(blocked) })
		}
	})
	h := func(c *LoopConn, in []byte) int {
		mu.Lock()
		readWhile = readWhile || c.Pending() > 0
		mu.Unlock()
		echo(c, in)
		mu.Lock()
		maxPending = max(maxPending, len(in))
		mu.Unlock()
		return len(in)
	}
	s := startLoops(t, h, opt)
	c := dialSmallWindow(t, s)
	_, all := messages(7, 4000, 4000) // about 8 MB, more than both socket buffers
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(all)
		c.CloseWrite()
		done <- err
	}()
	<-blocked // the socket to the peer is full: the loop waits for room
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, all) {
		t.Fatalf("echoed %d bytes, want %d", len(got), len(all))
	}
	mu.Lock()
	defer mu.Unlock()
	if readWhile {
		t.Error("the Handler was called while the connection had output waiting")
	}
	if maxPending > 128<<10 {
		t.Errorf("a Handler call saw %d bytes: more than the loop's read buffer", maxPending)
	}
}

func TestLoopsQueueFull(t *testing.T) {
	errs := make(chan error, 2)
	h := func(c *LoopConn, in []byte) int {
		_, err1 := c.Write(bytes.Repeat([]byte("a"), 600))
		_, err2 := c.WriteString(strings.Repeat("b", 600))
		errs <- err1
		errs <- err2
		c.Close()
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{MaxQueued: 1000})
	c := dial(t, s)
	c.Write([]byte("go\n"))
	if err := <-errs; err != nil {
		t.Fatalf("first Write: %v", err)
	}
	if err := <-errs; !errors.Is(err, ErrQueueFull) {
		t.Fatalf("second Write: %v, want ErrQueueFull", err)
	}
	got, _ := io.ReadAll(c)
	if want := strings.Repeat("a", 600); string(got) != want {
		t.Fatalf("got %d bytes %.10q..., want the first Write's 600", len(got), got)
	}
}

func TestLoopsMaxInput(t *testing.T) {
	closed := make(chan error, 1)
	never := func(c *LoopConn, in []byte) int { return 0 }
	s := startLoops(t, never, &LoopOptions{MaxInput: 100, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write(bytes.Repeat([]byte("x"), 100)) // at the bound: kept
	c.Write(bytes.Repeat([]byte("x"), 1))   // past it
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge", err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("client read %d, %v after the close; want EOF", n, err)
	}
}

// TestLoopsOpenCloseGreeting: OnOpen may write a greeting, a Handler's
// Close sends what it wrote first, and OnClose sees the peer's address.
func TestLoopsOpenCloseGreeting(t *testing.T) {
	type closeInfo struct {
		addr net.Addr
		err  error
		val  any
	}
	closed := make(chan closeInfo, 1)
	opt := &LoopOptions{
		OnOpen: func(c *LoopConn) {
			c.SetValue("greeted")
			c.WriteString("220 hello\r\n")
		},
		OnClose: func(c *LoopConn, err error) { closed <- closeInfo{c.RemoteAddr(), err, c.Value()} },
	}
	h := func(c *LoopConn, in []byte) int {
		k := bytes.IndexByte(in, '\n') + 1
		if string(in[:k]) == "QUIT\r\n" {
			c.WriteString("221 bye\r\n")
			c.Close()
			if _, err := c.WriteString("late"); !errors.Is(err, ErrClosed) {
				t.Errorf("Write after Close: %v, want ErrClosed", err)
			}
		}
		return k
	}
	s := startLoops(t, h, opt)
	c := dial(t, s)
	c.Write([]byte("QUIT\r\nNOOP\r\n"))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "220 hello\r\n221 bye\r\n" {
		t.Fatalf("got %q", got)
	}
	ci := <-closed
	if ci.err != nil || ci.val != "greeted" || ci.addr.String() != c.LocalAddr().String() {
		t.Fatalf("OnClose: %v %v %v; want nil, greeted, %v", ci.err, ci.val, ci.addr, c.LocalAddr())
	}
}

// TestLoopsPeerEnds: requests sent with the end of the stream are all
// answered before the server closes.
func TestLoopsPeerEnds(t *testing.T) {
	closed := make(chan error, 1)
	s := startLoops(t, lines, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("one\ntwo\n"))
	c.CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
}

// TestLoopsClose closes connections with ErrServerClosed, stops
// accepting and ends the loops' goroutines; and a server holds no
// goroutine per connection.
func TestLoopsClose(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	opened := make(chan struct{}, 100)
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve(ln, echo, &LoopOptions{Loops: 2,
		OnOpen: func(*LoopConn) { opened <- struct{}{} },
		OnClose: func(c *LoopConn, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	var conns []*net.TCPConn
	for range 100 {
		conns = append(conns, dial(t, s))
	}
	for range 100 {
		<-opened
	}
	if g := loopGoroutines(); g != 2 && !portableLoops {
		t.Errorf("%d goroutines of the server for 100 connections on 2 loops, want 2", g)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("read %d, %v after Close", n, err)
		}
	}
	mu.Lock()
	if len(errs) != 100 {
		t.Errorf("OnClose ran %d times for 100 connections", len(errs))
	}
	for _, err := range errs {
		if !errors.Is(err, ErrServerClosed) {
			t.Fatalf("OnClose learned %v, want ErrServerClosed", err)
		}
	}
	mu.Unlock()
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener still accepts after Close")
	}
}

// loopGoroutines counts the goroutines running netio's code for a Loops
// server.
func loopGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("netio.(*loop)")) || bytes.Contains(g, []byte("netio.(*Loops)")) {
			n++
		}
	}
	return n
}

func TestLoopsPinError(t *testing.T) {
	if portableLoops {
		t.Skip("the portable loops do not pin")
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Past NewLoops' check (which refuses it), to the pinning's failure.
	opt := &LoopOptions{Loops: 1, CPUs: []int{runtime.NumCPU() + 5000}}
	SetAnyCPU(opt)
	_, err = Serve(ln, echo, opt)
	if err == nil || !strings.Contains(err.Error(), "cannot pin") || !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("Serve pinned to a CPU that does not exist: %v, want os.ErrInvalid from the pinning", err)
	}
	s, err := Serve(ln, echo, &LoopOptions{Loops: 2, CPUs: []int{0, -3}})
	if !errors.Is(err, os.ErrInvalid) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Serve pinned to CPU -3: %v, want os.ErrInvalid", err)
	}
}

// TestLoopsAllocs: a round trip allocates nothing, server included.
func TestLoopsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := startLoops(t, echo, &LoopOptions{Loops: 1})
	c := dial(t, s)
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(rand.N(256))
	}
	got := make([]byte, 64)
	roundTrip := func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
	}
	roundTrip()
	if a := testing.AllocsPerRun(200, roundTrip); a != 0 {
		t.Errorf("%.2f allocations per round trip, want 0", a)
	}
}

// TestLoopsPeerReset: a connection the peer resets is closed, and OnClose
// learns the system's error.
func TestLoopsPeerReset(t *testing.T) {
	closed := make(chan error, 1)
	got := make(chan struct{}, 1)
	h := func(c *LoopConn, in []byte) int {
		got <- struct{}{}
		return len(in) // answers nothing: the reset finds an empty queue
	}
	s := startLoops(t, h, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("x"))
	<-got
	c.SetLinger(0) // Close sends RST
	c.Close()
	if err := <-closed; !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("OnClose learned %v, want ECONNRESET", err)
	}
}

// TestLoopsDo: a Handler hands its connection to another goroutine, which
// answers later through Do, in order; and Do on a closed connection does
// not run its function.
func TestLoopsDo(t *testing.T) {
	later := make(chan *LoopConn, 1)
	closed := make(chan *LoopConn, 1)
	h := func(c *LoopConn, in []byte) int {
		if string(in) == "quit\n" {
			c.Close()
		} else {
			later <- c
		}
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- c }})
	c := dial(t, s)
	c.Write([]byte("sub\n"))
	lc := <-later
	go func() {
		for i := range 3 {
			lc.Do(func(c *LoopConn) { fmt.Fprintf(c, "tick %d\n", i) })
		}
	}()
	r := bufio.NewReader(c)
	for i := range 3 {
		line, err := r.ReadString('\n')
		if want := fmt.Sprintf("tick %d\n", i); line != want || err != nil {
			t.Fatalf("got %q, %v; want %q", line, err, want)
		}
	}

	// A connection closed before its task runs: the task is skipped,
	// and a later task on the same loop shows the loop got past it.
	c2 := dial(t, s)
	c2.Write([]byte("quit\n"))
	gone := <-closed
	ran := make(chan bool, 1)
	gone.Do(func(*LoopConn) { ran <- true })
	lc.Do(func(*LoopConn) { ran <- false })
	if <-ran {
		t.Fatal("Do ran a function on a closed connection")
	}
}

// TestLoopsDoWhileWaiting: what a task writes while the connection waits
// for room leaves behind the output waiting, not in its middle.
func TestLoopsDoWhileWaiting(t *testing.T) {
	blocked := make(chan struct{})
	var once sync.Once
	conns := make(chan *LoopConn, 1)
	opt := &LoopOptions{OnOpen: func(c *LoopConn) { conns <- c }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(blocked) })
		}
	})
	s := startLoops(t, echo, opt)
	nc := dialSmallWindow(t, s)
	lc := <-conns
	all := bytes.Repeat([]byte("a"), 8<<20)
	go func() {
		nc.Write(all)
		nc.CloseWrite()
	}()
	<-blocked
	const mark = "ZZZZZZZZ"
	wrote := make(chan bool, 1)
	// The client reads only once the task has written: the connection
	// waits for room then. A first try that sent only part (the sent
	// hook) can still be followed by room (the portable loops try for a
	// while, and a socket's buffer grows), so the task is run again
	// until it finds output waiting; the client, not reading, makes sure
	// it does.
	for written := false; !written; written = <-wrote {
		lc.Do(func(c *LoopConn) {
			if c.Pending() == 0 {
				wrote <- false
				return
			}
			c.WriteString(mark)
			wrote <- true
		})
	}
	got, err := io.ReadAll(nc)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.IndexByte(got, 'Z')
	if i < 0 || !bytes.Equal(got[i:i+len(mark)], []byte(mark)) {
		t.Fatalf("the task's output is missing or split (at %d)", i)
	}
	rest := append(got[:i:i], got[i+len(mark):]...)
	if !bytes.Equal(rest, all) {
		t.Fatalf("the echo around the task's output: %d bytes, want %d of 'a'", len(rest), len(all))
	}
}
