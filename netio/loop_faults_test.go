//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// listenTCP listens on 127.0.0.1:0 with the socket options set first
// (accepted connections inherit them).
func listenTCP(t testing.TB, opts map[int]int) *net.TCPListener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			for opt, v := range opts {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, v)
			}
		})
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln.(*net.TCPListener)
}

func serveOn(t testing.TB, ln *net.TCPListener, h Handler, opt *LoopOptions) *Loops {
	t.Helper()
	s, err := Serve(ln, h, opt)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openFiles opens n temporary files, which take the lowest descriptor
// numbers free: those a closed server left.
func openFiles(t *testing.T, n int) []*os.File {
	var fs []*os.File
	for range n {
		f, err := os.CreateTemp(t.TempDir(), "fd")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		fs = append(fs, f)
	}
	return fs
}

func checkEmpty(t *testing.T, fs []*os.File) {
	t.Helper()
	for _, f := range fs {
		if st, err := f.Stat(); err != nil || st.Size() != 0 {
			t.Errorf("%s (descriptor %d): %d bytes written after the server closed (%v)", f.Name(), f.Fd(), st.Size(), err)
		}
	}
}

// TestLoopsDoAfterClose: after Close, Do fails with ErrServerClosed and
// writes nothing: not to the loop's old eventfd, whose number a file
// opened since has taken.
func TestLoopsDoAfterClose(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }})
	dial(t, s)
	lc := <-conns
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fs := openFiles(t, 8)
	ran := false
	if err := lc.Do(func(*LoopConn) { ran = true }); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Do after Close: %v, want ErrServerClosed, as Do's doc says", err)
	}
	for _, err := range s.Wake() { // the loops themselves, as Shutdown posts to them
		if !errors.Is(err, ErrServerClosed) {
			t.Errorf("posting to a closed loop: %v, want ErrServerClosed", err)
		}
	}
	if len(s.Wake()) != 1 {
		t.Error("a closed loop took a task")
	}
	checkEmpty(t, fs)
	if ran {
		t.Error("Do ran its function after Close")
	}
}

// TestLoopsStartErrorWritesNothing: a Serve that fails (a loop cannot be
// pinned) leaves no descriptor open and wakes no descriptor it closed.
func TestLoopsStartErrorWritesNothing(t *testing.T) {
	if portableLoops {
		t.Skip("the portable loops do not pin")
	}
	before, _ := os.ReadDir("/proc/self/fd")
	ln := listenTCP(t, nil)
	defer ln.Close()
	// Past NewLoops' check (which refuses the CPU), to the pinning.
	opt := &LoopOptions{Loops: 3, CPUs: []int{0, runtime.NumCPU() + 5000}}
	SetAnyCPU(opt)
	for range 20 {
		if _, err := Serve(ln, echo, opt); err == nil {
			t.Fatal("Serve pinned a loop to a CPU that does not exist")
		}
	}
	after, _ := os.ReadDir("/proc/self/fd")
	if len(after) != len(before)+1 { // the listener
		t.Errorf("%d descriptors open after 20 failed Serves, %d before (and the listener)", len(after), len(before))
	}
}

// TestLoopsQueueBoundedWhileWaiting: a producer that pushes 64 KiB per Do
// to a connection whose peer reads half of each push taken keeps it
// waiting for room the whole time; what the connection retains stays
// near MaxQueued, not what has been sent through it.
func TestLoopsQueueBoundedWhileWaiting(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	ln := listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10})
	s := serveOn(t, ln, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }})
	nc := dialSmallWindow(t, s)
	lc := <-conns
	chunk := bytes.Repeat([]byte("p"), 64<<10)
	const pushes = 2048 // 128 MiB pushed, half of what is taken read
	ran := make(chan struct{})
	readMore := make(chan struct{}, pushes)
	readErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 32<<10)
		for range readMore {
			if _, err := io.ReadFull(nc, buf); err != nil {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()
	var peak uint64
	var ms runtime.MemStats
	refused := 0 // pushes that found the queue full; only the loop counts
	for i := range pushes {
		took := false
		if err := lc.Do(func(c *LoopConn) {
			_, err := c.Write(chunk)
			if errors.Is(err, ErrQueueFull) {
				refused++
			}
			took = err == nil
			ran <- struct{}{}
		}); err != nil {
			t.Fatal(err)
		}
		<-ran
		if took {
			// Half of what was taken: the reader never waits for bytes
			// that were refused (it did, under load, until the idle
			// timeout ended the connection).
			readMore <- struct{}{}
		}
		if i%256 == 255 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	close(readMore)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	// Half of what was taken was read: the rest found the queue full,
	// but for what the sockets' buffers and the queue held. (Queued at
	// the end depends on when the last refusals came, under load.)
	if refused < pushes/4 {
		t.Fatalf("%d of %d pushes found the queue full: the connection did not stay waiting for room", refused, pushes)
	}
	if peak > 32<<20 {
		t.Fatalf("heap reached %d MiB while 64 MiB went through a connection holding at most 1 MiB", peak>>20)
	}
}

// TestLoopsHalfClose: a peer that ends its stream and then reads gets the
// reply a worker posts later through Do; the Handler learns of the end.
func TestLoopsHalfClose(t *testing.T) {
	work := make(chan *LoopConn, 1)
	sawEOF := make(chan []byte, 1)
	h := func(c *LoopConn, in []byte) int {
		if c.EOF() {
			sawEOF <- bytes.Clone(in)
			return len(in)
		}
		if k := bytes.IndexByte(in, '\n') + 1; k > 0 {
			work <- c
			return k
		}
		return 0
	}
	closed := make(chan error, 1)
	s := startLoops(t, h, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("request\npartial"))
	c.CloseWrite()
	lc := <-work
	if got := <-sawEOF; string(got) != "partial" {
		t.Fatalf("the end-of-stream call saw %q, want the unused %q", got, "partial")
	}
	// The worker answers after the end of stream has been read.
	if err := lc.Do(func(c *LoopConn) { c.WriteString("reply\n"); c.Close() }); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "reply\n" {
		t.Fatalf("got %q, %v; want the worker's reply", got, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
}

// TestLoopsLargeFrame: a Handler waiting for a 1 MiB frame is given it
// without the input being copied again at every read: the bytes moved
// stay a small multiple of the frame. So too with a MaxInput of
// math.MaxInt ("no bound"), whose sum with a read's size wrapped: the
// buffer was made anew, one read larger, at every read.
func TestLoopsLargeFrame(t *testing.T) {
	for _, maxInput := range []int{2 * frameSize, math.MaxInt} {
		t.Run(fmt.Sprint(maxInput), func(t *testing.T) { testLoopsLargeFrame(t, maxInput) })
	}
}

const frameSize = 1 << 20

func testLoopsLargeFrame(t *testing.T, maxInput int) {
	const frame = frameSize
	var moved, calls int
	var mu sync.Mutex
	opt := &LoopOptions{Loops: 1, MaxInput: maxInput}
	SetMovedHook(opt, func(n int) { mu.Lock(); moved += n; mu.Unlock() })
	h := func(c *LoopConn, in []byte) int {
		mu.Lock()
		calls++
		mu.Unlock()
		if len(in) < frame {
			return 0
		}
		if !bytes.Equal(in[:frame], msgFrame(frame)) {
			c.WriteString("corrupt\n")
		} else {
			c.WriteString("ok\n")
		}
		return frame
	}
	s := startLoops(t, h, opt)
	c := dial(t, s)
	for range 2 {
		go c.Write(msgFrame(frame))
		line, err := bufio.NewReader(io.LimitReader(c, 3)).ReadString('\n')
		if line != "ok\n" {
			t.Fatalf("got %q, %v", line, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d Handler calls, %d bytes moved for 2 frames of %d", calls, moved, frame)
	if calls < 8 {
		t.Fatalf("only %d Handler calls for two frames: the frames did not come in pieces", calls)
	}
	if moved > 2*3*frame {
		t.Fatalf("%d bytes moved for 2 frames of %d bytes: more than 3 times each", moved, frame)
	}
}

func msgFrame(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7 / 5)
	}
	return b
}

// TestLoopsWriteOutsideCall: a connection written from another's Handler
// fails with ErrOutsideLoop and sends nothing.
func TestLoopsWriteOutsideCall(t *testing.T) {
	conns := make(chan *LoopConn, 2)
	errs := make(chan error, 1)
	var first *LoopConn
	h := func(c *LoopConn, in []byte) int {
		if c == first {
			return len(in)
		}
		_, err := first.WriteString("from another connection\n")
		errs <- err
		c.WriteString("done\n")
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) {
		if first == nil {
			first = c
		}
		conns <- c
	}})
	a := dial(t, s)
	<-conns
	b := dial(t, s)
	<-conns
	b.Write([]byte("x"))
	if err := <-errs; !errors.Is(err, ErrOutsideLoop) {
		t.Fatalf("Write to a connection outside its call: %v, want ErrOutsideLoop", err)
	}
	line, _ := bufio.NewReader(b).ReadString('\n')
	if line != "done\n" {
		t.Fatalf("b got %q", line)
	}
	_ = a
}

// TestLoopsSpread: accepted connections are spread evenly over the loops.
func TestLoopsSpread(t *testing.T) {
	const loops, conns = 4, 1000
	var mu sync.Mutex
	per := make([]int, loops)
	opened := make(chan struct{}, conns)
	s := startLoops(t, echo, &LoopOptions{Loops: loops, OnOpen: func(c *LoopConn) {
		mu.Lock()
		per[LoopIndex(c)]++
		mu.Unlock()
		opened <- struct{}{}
	}})
	for range conns {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for range conns {
		<-opened
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range per {
		if d := n - conns/loops; d < -conns/loops/5 || d > conns/loops/5 {
			t.Fatalf("loop %d got %d of %d connections (all: %v), want %d ± 20%%", i, n, conns, per, conns/loops)
		}
	}
}

// TestLoopsReadBudget: a loop with two connections full of input reads
// them in turns of one budget each, not one to its end first.
func TestLoopsReadBudget(t *testing.T) {
	if portableLoops {
		t.Skip("the portable loops read one buffer of a connection per turn, and its goroutines are scheduled by the runtime: ReadBudget is moot")
	}
	type call struct {
		c *LoopConn
		n int
	}
	const size = 512 << 10
	var mu sync.Mutex
	var calls []call
	total := 0
	all := make(chan struct{})
	h := func(c *LoopConn, in []byte) int {
		mu.Lock()
		calls = append(calls, call{c, len(in)})
		if total += len(in); total == 2*size && len(in) > 0 {
			close(all)
		}
		mu.Unlock()
		return len(in)
	}
	conns := make(chan *LoopConn, 2)
	ln := listenTCP(t, map[int]int{syscall.SO_RCVBUF: 4 << 20})
	s := serveOn(t, ln, h, &LoopOptions{Loops: 1, ReadBudget: 16 << 10, OnOpen: func(c *LoopConn) { conns <- c }})
	a, b := dial(t, s), dial(t, s)
	la := <-conns
	<-conns
	// Hold the loop while both peers fill their sockets.
	hold, held := make(chan struct{}), make(chan struct{})
	la.Do(func(*LoopConn) { close(held); <-hold })
	<-held
	wrote := make(chan error, 2)
	for _, c := range []*net.TCPConn{a, b} {
		go func() { _, err := c.Write(bytes.Repeat([]byte("u"), size)); wrote <- err }()
	}
	for range 2 {
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
	}
	close(hold)
	<-all
	mu.Lock()
	defer mu.Unlock()
	got := map[*LoopConn]int{}
	first := calls[0].c
	for _, cl := range calls {
		if cl.c != first {
			break
		}
		got[first] += cl.n
	}
	if got[first] > readSize {
		t.Fatalf("the first connection was given %d bytes before the other was read: more than one turn (%d)", got[first], readSize)
	}
}

// TestLoopsLingerOnClose: a Handler that closes while the peer is still
// sending (a QUIT followed by more) does not reset the connection: the
// reply arrives, then the end of stream, and the server closes once the
// peer has ended its own.
func TestLoopsLingerOnClose(t *testing.T) {
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		if bytes.HasPrefix(in, []byte("QUIT\n")) {
			c.WriteString("bye\n")
			c.Close()
		}
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	for range 20 {
		c := dial(t, s)
		junk := append([]byte("QUIT\n"), bytes.Repeat([]byte("j"), 256<<10)...)
		go c.Write(junk)
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "bye\n" {
			t.Fatalf("got %q, %v; want the reply and the end of stream", got, err)
		}
		c.Close()
		if err := <-closed; err != nil {
			t.Fatalf("OnClose: %v", err)
		}
	}
}

// TestLoopsLingerPeerSends: a close does not lose the last reply to a
// peer that starts sending again after the close and reads only later:
// the server throws its input away until the peer has the whole reply,
// and OnClose learns nil. Small socket buffers make it certain that the
// reply is still in the server's socket when the peer sends, and that
// the peer's 256 KiB go through only if the server reads them.
func TestLoopsLingerPeerSends(t *testing.T) {
	if !lingerSeesAcks {
		t.Skip("the peer's acknowledgement of the output is not seen here: the linger waits for its end of stream")
	}
	const size = 300_000
	reply := bytes.Repeat([]byte("r"), size)
	closed := make(chan error, 1)
	handled := make(chan struct{}, 1)
	h := func(c *LoopConn, in []byte) int {
		c.Write(reply)
		c.Close()
		handled <- struct{}{}
		return len(in)
	}
	opt := &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, newFakeClock().Now) // the linger ends with the acknowledgements
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_RCVBUF: 16 << 10}), h, opt)
	for run := range 5 {
		c := dialSmallWindow(t, s)
		c.SetWriteBuffer(16 << 10)
		c.Write([]byte("go\n"))
		<-handled
		s.Sync() // the loop has closed (or begun to) with nothing to read
		wrote := make(chan int, 1)
		c.SetWriteDeadline(time.Now().Add(time.Minute)) // a hang guard: the server stops reading
		go func() {
			chunk, n := make([]byte, 1000), 0
			for n < 256<<10 {
				k, err := c.Write(chunk)
				if n += k; err != nil {
					break
				}
			}
			wrote <- n
		}()
		if n := <-wrote; n < 256<<10 {
			t.Fatalf("run %d: the peer could write %d bytes after the close", run, n)
		}
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		got, err := io.ReadAll(c)
		if err != nil || len(got) != size {
			t.Fatalf("run %d: the peer read %d bytes, %v; want the %d of the reply and EOF", run, len(got), err, size)
		}
		if err := <-closed; err != nil {
			t.Fatalf("run %d: OnClose: %v", run, err)
		}
	}
}

// TestLoopsLingerUnsent: when the linger time runs out with some of the
// reply not taken by the peer, OnClose says so with ErrUnsent.
func TestLoopsLingerUnsent(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	handled := make(chan struct{}, 1)
	h := func(c *LoopConn, in []byte) int {
		c.Write(bytes.Repeat([]byte("r"), 300_000))
		c.Close()
		handled <- struct{}{}
		return len(in)
	}
	opt := &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	sent := make(chan struct{}, 1)
	SetSentHook(opt, func(int, int) { sent <- struct{}{} })
	// All of the reply fits in the server's socket, not in the peer's.
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 1 << 20}), h, opt)
	c := dialSmallWindow(t, s) // and never reads
	c.Write([]byte("go\n"))
	<-handled
	<-sent      // the first try (on the portable loops, it may send part)
	waitSent(s) // all of it in the socket: the linger starts
	clk.advance(s, 4*time.Second)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) before the linger time", err)
	default:
	}
	clk.advance(s, time.Second)
	if err := <-closed; !errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want ErrUnsent", err)
	}
}

// TestLoopsWritableCloseLingers: a connection that OnWritable closes,
// with nothing more to write, lingers as any other close does, until the
// peer has its output or ends its stream: at the first OnWritable, and at
// one asked for again with nothing queued (told on a later turn). The
// portable loops closed it at once, in the same turn: OnClose learned nil
// before the peer had the output, and a peer still sending then got a
// reset.
func TestLoopsWritableCloseLingers(t *testing.T) {
	for _, again := range []bool{false, true} {
		out := bytes.Repeat([]byte("o"), 1<<20)
		var closes atomic.Int32
		closed := make(chan error, 1)
		writable := make(chan struct{}, 1)
		asked := false
		opt := &LoopOptions{Loops: 1, MaxQueued: 2 << 20,
			OnOpen: func(c *LoopConn) {
				c.Write(out)
				c.NotifyWritable()
			},
			OnWritable: func(c *LoopConn) {
				if again && !asked {
					asked = true
					c.NotifyWritable()
					return
				}
				if err := c.Close(); err != nil {
					t.Error(err)
				}
				writable <- struct{}{}
			},
			OnClose: func(c *LoopConn, err error) { closes.Add(1); closed <- err },
		}
		SetLoopClock(opt, newFakeClock().Now)
		SetLingerHeldHook(opt, func() bool { return true }) // the peer has not acknowledged it all
		s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, opt)
		c := dial(t, s)
		if _, err := io.ReadFull(c, make([]byte, len(out))); err != nil {
			t.Fatal(err)
		}
		<-writable
		s.Sync() // the turn that called OnWritable is over
		if closes.Load() != 0 {
			t.Fatalf("again %v: closed (OnClose: %v) without lingering", again, <-closed)
		}
		c.CloseWrite() // the peer's end of stream ends the linger
		if err := <-closed; err != nil {
			t.Fatalf("again %v: OnClose: %v", again, err)
		}
	}
}

// TestLoopsCloseWaitingPeerSends: a connection closed with output still
// waiting for room throws the peer's input away, so that a peer that
// writes a lot before it reads gets to read, and gets it all.
func TestLoopsCloseWaitingPeerSends(t *testing.T) {
	if !lingerSeesAcks {
		t.Skip("the peer's acknowledgement of the output is not seen here: the linger waits for its end of stream")
	}
	const size = 1 << 20
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		if !c.EOF() {
			c.Write(bytes.Repeat([]byte("r"), size))
			c.Close()
		}
		return len(in)
	}
	opt := &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }}
	// A clock that stands still: the linger ends with the peer's
	// acknowledgements, however slowly a loaded machine moves the bytes.
	SetLoopClock(opt, newFakeClock().Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_RCVBUF: 16 << 10, syscall.SO_SNDBUF: 16 << 10}), h, opt)
	c := dialSmallWindow(t, s)
	c.SetWriteBuffer(16 << 10)
	c.Write([]byte("go\n"))
	// A bound on the wait only, in case the server never reads.
	c.SetWriteDeadline(time.Now().Add(time.Minute))
	n, err := c.Write(make([]byte, 512<<10))
	if err != nil {
		t.Fatalf("the peer wrote %d bytes before reading: %v", n, err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard: the linger does not end
	got, err := io.ReadAll(c)
	if err != nil || len(got) != size {
		t.Fatalf("the peer read %d bytes, %v; want %d and EOF", len(got), err, size)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
}

// TestLoopsDoBounded: Do queues at most MaxDo functions for a connection
// its loop has not yet run; past that it fails with ErrQueueFull, and
// once the loop has run them Do works again.
func TestLoopsDoBounded(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, MaxDo: 8, OnOpen: func(c *LoopConn) { conns <- c }})
	nc := dial(t, s)
	lc := <-conns
	running, release := make(chan struct{}), make(chan struct{})
	if err := lc.Do(func(*LoopConn) { close(running); <-release }); err != nil {
		t.Fatal(err)
	}
	<-running // the loop is held: nothing more runs
	ran := 0
	for i := range 8 {
		if err := lc.Do(func(*LoopConn) { ran++ }); err != nil {
			t.Fatalf("Do %d of MaxDo 8: %v", i+1, err)
		}
	}
	if err := lc.Do(func(*LoopConn) { ran++ }); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Do past MaxDo: %v, want ErrQueueFull", err)
	}
	close(release)
	onLoopCheck := make(chan int, 1)
	for {
		err := lc.Do(func(*LoopConn) { onLoopCheck <- ran })
		if err == nil {
			break
		}
		if !errors.Is(err, ErrQueueFull) {
			t.Fatal(err)
		}
		s.Sync()
	}
	if n := <-onLoopCheck; n != 8 {
		t.Fatalf("%d functions ran, want the 8 queued", n)
	}
	roundTrip(t, bufio.NewReader(nc), nc)
}

// TestLoopsInputBounded: a Handler is handed at most MaxInput + 64 KiB
// (what it left unused, and one read), however its buffer has grown.
func TestLoopsInputBounded(t *testing.T) {
	const keep = 62 << 10 // left unused each call, under MaxInput's 64 KiB
	most := make(chan int, 1)
	seen := 0
	h := func(c *LoopConn, in []byte) int {
		seen = max(seen, len(in))
		if c.EOF() {
			most <- seen
			c.Close()
			return len(in)
		}
		return max(len(in)-keep, 0)
	}
	s := startLoops(t, h, nil)
	c := dial(t, s)
	go func() {
		c.Write(make([]byte, 8<<20))
		c.CloseWrite()
	}()
	if n := <-most; n > 64<<10+64<<10 {
		t.Fatalf("the Handler was handed %d bytes, over MaxInput + 64 KiB", n)
	}
}

// TestLoopsShutdownLingers: Shutdown closes a connection as Close does,
// lingering while its peer goes on sending, so the reply is not lost.
func TestLoopsShutdownLingers(t *testing.T) {
	if !lingerSeesAcks {
		t.Skip("the peer's acknowledgement of the output is not seen here: the linger waits for its end of stream")
	}
	const size = 300_000
	closed := make(chan error, 1)
	handled := make(chan struct{}, 1)
	h := func(c *LoopConn, in []byte) int {
		if bytes.HasPrefix(in, []byte("go\n")) {
			c.Write(bytes.Repeat([]byte("r"), size))
			handled <- struct{}{}
		}
		return len(in)
	}
	conns := make(chan *LoopConn, 1)
	opt := &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c },
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, newFakeClock().Now) // the linger ends with the acknowledgements
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_RCVBUF: 16 << 10}), h, opt)
	c := dialSmallWindow(t, s)
	lc := <-conns
	c.SetWriteBuffer(16 << 10)
	c.Write([]byte("go\n"))
	<-handled
	s.Sync()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	// The peer sends once the loop has closed its connection.
	for closing := false; !closing; {
		seen := make(chan bool, 1)
		s.loops[0].post(task{lf: func(*loop) { seen <- lc.closing }})
		closing = <-seen
	}
	c.SetWriteDeadline(time.Now().Add(time.Minute)) // a bound on failure only
	if n, err := c.Write(make([]byte, 256<<10)); err != nil {
		t.Fatalf("the peer wrote %d bytes after the Shutdown: %v", n, err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard: the linger does not end
	got, err := io.ReadAll(c)
	if err != nil || len(got) != size {
		t.Fatalf("the peer read %d bytes, %v; want the %d of the reply and EOF", len(got), err, size)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestLoopsWriteFromGoroutine: a connection written from another
// goroutine once its loop has left the call fails with ErrOutsideLoop,
// and the check is no data race (with -race, it was reported as one: the
// loop's end of the call and the check were not ordered).
func TestLoopsWriteFromGoroutine(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	h := func(c *LoopConn, in []byte) int {
		conns <- c
		c.WriteString("ok\n")
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1})
	a := dial(t, s)
	a.Write([]byte("x"))
	// The reply is sent after the call has ended; reading it orders
	// nothing for the race detector.
	if line, err := bufio.NewReader(a).ReadString('\n'); line != "ok\n" {
		t.Fatalf("reply %q, %v", line, err)
	}
	c := <-conns
	if _, err := c.WriteString("from a goroutine\n"); !errors.Is(err, ErrOutsideLoop) {
		t.Fatalf("Write from a goroutine: %v, want ErrOutsideLoop", err)
	}
}

// TestLoopConnOutsideWhileClosing calls every method of a connection
// from another goroutine, outside any call on it, while its loop closes
// it (the peer resets it): each call gets ErrOutsideLoop, then ErrClosed,
// and none is a data race (the methods read the loop's fields before
// anything else: run with -race).
func TestLoopConnOutsideWhileClosing(t *testing.T) {
	opened := make(chan *LoopConn, 1)
	closed := make(chan struct{})
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{
		Loops:   1,
		OnOpen:  func(c *LoopConn) { opened <- c },
		OnClose: func(*LoopConn, error) { close(closed) },
	})
	cc := dial(t, s)
	c := <-opened
	s.Sync() // OnOpen has returned
	calls := []func() error{
		func() error { _, err := c.Write([]byte("x")); return err },
		func() error { _, err := c.WriteString("x"); return err },
		c.Close,
		func() error { return c.SetDeadline(time.Now()) },
		func() error { _, err := c.Detach(); return err },
		func() error { return c.SetReading(false) },
		c.NotifyWritable,
		func() error { return c.Control(func(uintptr) {}) },
		func() error { _, err := c.AfterFunc(time.Hour, func(*LoopConn) {}); return err },
		func() error { return c.StartTLS(&tls.Config{}) },
	}
	done := make(chan error)
	go func() {
		sawClosed := false
		for {
			for i, f := range calls {
				switch err := f(); {
				case errors.Is(err, ErrClosed):
					sawClosed = true
				case errors.Is(err, ErrOutsideLoop) && !sawClosed:
				default:
					done <- fmt.Errorf("call %d: %v (closed seen: %v)", i, err, sawClosed)
					return
				}
			}
			select {
			case <-closed:
				if sawClosed {
					done <- nil
					return
				}
			default:
			}
		}
	}()
	cc.SetLinger(0)
	cc.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
