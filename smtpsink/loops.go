package smtpsink

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/dotstop"
	"github.com/wirespeed/wirespeed/netio"
)

// The loops engine runs each session as a state machine on netio's event
// loops: the loop hands over whatever bytes it read, and the session
// cuts command lines out of them (lineScanner), decodes DATA with a
// dot.Decoder, and reads BDAT chunks through a textproto.Reader fed with
// exactly the bytes at hand, so that nothing ever waits for input. An
// idle session holds no buffer. A Delay pauses the session with a timer
// on its loop (netio's AfterFunc). TLS is netio's (StartTLS): the
// session reads and writes plaintext (looptls.go).

// A loopMode is what a session on the loops engine does with its input.
type loopMode uint8

const (
	modeCommand   loopMode = iota // command lines
	modeData                      // DATA's dot-encoded message
	modeChunk                     // a BDAT chunk's bytes
	modeSkip                      // a refused chunk's bytes, thrown away
	modePaused                    // a Delay: input is held until it ends
	modeStalled                   // replies wait for the client to read them
	modeWaiting                   // for a slot of MaxConns: not greeted yet
	modeHandshake                 // a TLS handshake (netio's, off the loop)
	modeClosed
)

// maxWaiting is how many connections over MaxConns wait for a slot on
// the loops engine (at least; MaxConns if more): as many as Linux's
// default listen queue holds (net.core.somaxconn), where they would wait
// on the goroutine engine. Each holds a descriptor and about 1.5 KiB.
const maxWaiting = 4096

// maxHeld bounds the input a session holds while paused or waiting for
// a slot: a client that sends more without waiting for replies is closed.
const maxHeld = 64 << 10

// loopSession is a session's state on the loops engine.
type loopSession struct {
	ss   *session
	c    *netio.LoopConn
	mode loopMode
	eof  bool // the peer ended its stream

	slot    bool   // holds a slot of MaxConns, so the session has begun
	granted bool   // given a slot by freeSlot (s.mu), perhaps not begun
	held    []byte // input that came while paused or waiting
	then    func() bool

	dl    deadline
	setAt time.Time // the deadline last set on c

	// modeData
	dec        dot.Decoder
	dropping   bool  // the data failed: the rest is discarded
	discarded  int64 // input discarded since
	dataCalls  int   // Handler calls that brought data since it started
	left       int64 // modeChunk, modeSkip: bytes of the chunk to come
	skipThen   func() bool
	feed       feed // what the chunks' textproto.Reader reads
	traceBuf   []byte
	w          loopWriter
	refusedCon bool // over MaxConns and refused: never a session
	untracked  bool // accepted after the server began to stop: not counted at all

	tls      bool // STARTTLS or implicit TLS began a handshake
	implicit bool // implicit TLS: the greeting follows the handshake

	// owed counts the replies that accepted a message since the
	// session's output was last seen all sent (Stats.Unsent): netio
	// reads a connection only once its output is sent.
	owed uint64
}

// sent notes, at the start of a loop's call into the session, whether
// the output of the calls before has all left.
func (ls *loopSession) sent() {
	if ls.c.Queued() == 0 && ls.w.err == nil {
		ls.owed = 0
	}
}

// feed is the source of a BDAT message's textproto.Reader on the loops
// engine: the bytes of the chunk at hand.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.ErrUnexpectedEOF // a chunk asked for more than it was given
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// loopWriter sends a session's replies on its loop: they leave with the
// rest of the call's output when the call returns (over TLS, sealed in
// one record).
type loopWriter struct {
	ls  *loopSession
	err error
}

func (w *loopWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.ls.ss.cfg.Trace != nil {
		w.ls.trace('>', p)
	}
	n, err := w.ls.c.Write(p)
	w.err = err
	return n, err
}

func (w *loopWriter) WriteString(s string) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.ls.ss.cfg.Trace != nil {
		w.ls.trace('>', []byte(s))
	}
	n, err := w.ls.c.WriteString(s)
	w.err = err
	return n, err
}

func (w *loopWriter) Flush() error { return w.err }

func (ls *loopSession) trace(dir byte, p []byte) {
	ls.traceBuf = ls.ss.s.trace(ls.traceBuf, ls.ss.id, dir, p)
}

// serveLoops serves the listener on netio's event loops until the server
// closes.
func (s *Server) serveLoops() error {
	writeTimeout := s.cfg.Timeout
	if writeTimeout == 0 {
		writeTimeout = -1
	}
	opt := &netio.LoopOptions{
		// The sessions' own deadlines bound every wait for input, and
		// the handshakes.
		IdleTimeout:      -1,
		HandshakeTimeout: -1,
		OnHandshake:      s.loopHandshake,
		WriteTimeout:     writeTimeout,
		Clock:            s.h.now,
		OnOpen:           s.loopOpen,
		OnClose:          s.loopClose,
		OnTimeout:        s.loopTimeout,
		OnShutdown:       s.loopShutdown,
		OnWritable:       s.loopWritable,
		OnAcceptError: func(err error) {
			s.logf("smtpsink: accept: %v", err)
		},
	}
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return nil
	default:
	}
	l, err := netio.Serve(s.ln, s.loopHandle, opt)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.loops = l
	s.mu.Unlock()
	<-s.stop
	return nil
}

// loopOpen starts a session on a connection the loops accepted, or has
// it wait for a slot, or refuses it.
func (s *Server) loopOpen(c *netio.LoopConn) {
	ss := newSession(s, nil, c.RemoteAddr(), 0)
	ls := &loopSession{ss: ss, c: c}
	ls.w.ls = ls
	ls.dl = deadline{timeout: s.cfg.Timeout, rate: s.cfg.MinDataRate}
	ss.loop, ss.bw = ls, &ls.w
	c.SetValue(ls)
	s.mu.Lock()
	select {
	case <-s.stop:
		// Accepted as the server began to stop: no session, as a
		// connection left in the listen queue.
		s.mu.Unlock()
		ls.mode, ls.untracked = modeClosed, true
		c.WriteString(s.inClear("421 4.3.2 Service shutting down, closing connection\r\n"))
		c.Close()
		return
	default:
	}
	switch {
	case s.cfg.MaxConns <= 0 || s.slots < s.cfg.MaxConns:
		s.slots++
		ls.slot = true
	case s.cfg.RefuseOverMaxConns || len(s.waiting) >= max(s.cfg.MaxConns, maxWaiting):
		// As many wait as a listen queue would hold: beyond, a client
		// learns at once to come back later.
		ls.refusedCon, ls.mode = true, modeClosed
	default:
		ls.mode = modeWaiting
		s.waiting = append(s.waiting, ls)
		c.SetReading(false) // as in a listen queue, its input waits in the kernel
	}
	s.live[ls] = struct{}{}
	s.enter()
	s.mu.Unlock()
	if ls.refusedCon {
		s.stats.refused.Add(1)
		c.WriteString(s.inClear("421 4.7.0 " + s.cfg.Hostname + " Error: too many connections, try again later\r\n"))
		c.Close()
		return
	}
	if ls.slot {
		ls.begin()
	}
}

// begin starts the session once it has a slot: the greeting, or with
// implicit TLS, the handshake.
func (ls *loopSession) begin() {
	ss, s := ls.ss, ls.ss.s
	ls.mode, ls.slot = modeCommand, true
	ss.id = s.nextID.Add(1)
	s.stats.sessions.Add(1)
	s.stats.active.Add(1)
	ls.c.SetReading(true)
	if s.cfg.Trace != nil && len(ls.held) > 0 {
		ls.trace('<', ls.held) // what came before it had its number
	}
	if ss.cfg.TLSImplicit {
		ls.startHandshake(true)
		return
	}
	ls.run(func() bool { return ss.wait(s.k.connect.delay, ss.greet) })
	held := ls.held
	ls.held = nil
	ls.input(held)
}

// run runs f, a step of the session, and closes the session if it
// reports the session's end.
func (ls *loopSession) run(f func() bool) {
	if !f() || ls.ss.bw.Flush() != nil {
		ls.close()
	}
}

// close ends the session: the connection closes once its output is
// sent.
func (ls *loopSession) close() {
	if ls.mode == modeClosed {
		return
	}
	ls.mode = modeClosed
	ls.c.Close() // over TLS, close_notify follows the replies
}

func (s *Server) loopHandle(c *netio.LoopConn, in []byte) int {
	ls := c.Value().(*loopSession)
	ls.sent()
	ls.eof = c.EOF()
	if s.cfg.Trace != nil && len(in) > 0 && ls.mode != modeClosed && ls.mode != modeWaiting {
		ls.trace('<', in)
	}
	ls.input(in)
	if s.h.read != nil && len(in) > 0 {
		s.h.read(len(in))
	}
	return len(in)
}

// input takes bytes from the client (all of them: what the session cannot
// use now, it holds), and at the end of the client's stream ends the
// session, unless it is paused with input held.
func (ls *loopSession) input(in []byte) {
	switch ls.mode {
	case modePaused, modeWaiting, modeStalled:
		if len(ls.held)+len(in) > maxHeld {
			ls.close()
			return
		}
		ls.held = append(ls.held, in...)
		return
	case modeHandshake, modeClosed:
		return
	}
	n := ls.process(in)
	if ls.mode == modePaused || ls.mode == modeStalled {
		// At most what one read brought: reading is off until then.
		ls.held = append(ls.held, in[n:]...)
		return
	}
	if ls.eof {
		// What the stream cut off (a line without its end, a message
		// without its end) is never served.
		ls.close()
		return
	}
	ls.arm()
}

// process serves in until it is used up or the session pauses, starts
// TLS or closes; it returns how much of in it used.
func (ls *loopSession) process(in []byte) (used int) {
	ss := ls.ss
	for used < len(in) {
		p := in[used:]
		switch ls.mode {
		case modeCommand:
			ss.lines.max = ss.lineMax()
			n, line, done, long := ss.lines.scan(p)
			used += n
			if !done {
				continue
			}
			ls.dl.command()
			if long {
				ss.tooLong()
				continue
			}
			if _, ok := ss.command(ss.lineString(line)); !ok {
				ss.bw.Flush()
				ls.close()
				return used
			}
			if ss.quit {
				ls.close()
				return used
			}
			if ls.mode == modeCommand && ls.c.Queued() > outHigh {
				if ss.bw.Flush() != nil {
					ls.close()
				} else {
					ls.stall()
				}
				return used
			}
		case modeData:
			used += ls.data(p)
		case modeChunk:
			used += ls.chunkInput(p)
		case modeSkip:
			n := int(min(int64(len(p)), ls.left))
			used += n
			ls.left -= int64(n)
			ls.dl.afterRead(n)
			if ls.left == 0 {
				ls.mode = modeCommand
				ls.endData()
				ls.run(ls.skipThen)
			}
		default:
			return used
		}
		if ls.mode == modeHandshake {
			return len(in) // the rest came in the clear after STARTTLS: dropped
		}
		if ss.bw.Flush() != nil {
			ls.close()
			return used
		}
	}
	return used
}

// pause holds the session for d (Config.Delay), with a timer on its
// loop, then runs then and serves the input that came meanwhile. A
// session that ends meanwhile (the server closing) drops the timer with
// its connection.
//
// The timer fires a little early, by a quarter more than how late the
// loop has been to run such timers (smoothed, and within minLead and
// maxLead), and the loop waits out the rest, a quarter of that lateness
// on average: a thread woken from an idle CPU runs tens of
// microseconds after its time, which a client timing a 1 ms wait sees
// (the goroutine engine's Sleeper spins its last stretch likewise).
func (ls *loopSession) pause(d time.Duration, then func() bool) {
	s := ls.ss.s
	ls.mode, ls.then = modePaused, then
	ls.c.SetDeadline(time.Time{})
	ls.setAt = time.Time{}
	ls.c.SetReading(false) // the client's input waits in the kernel meanwhile
	if s.h.sleep != nil {
		// The test's clock, which blocks: on a goroutine, which Close
		// waits for.
		s.enter()
		go func() {
			defer s.leave()
			s.h.sleep(d)
			ls.c.Do(ls.unpause)
		}()
		return
	}
	lag := time.Duration(s.timerLag.Load())
	lead := min(max(lag+lag/4, minLead), maxLead, d)
	if s.h.now != nil {
		lead = 0 // the test's clock: d as it is
	}
	until := time.Now().Add(d)
	_, err := ls.c.AfterFunc(d-lead, func(c *netio.LoopConn) {
		if lead > 0 {
			late := int64(time.Since(until.Add(-lead)))
			s.timerLag.Store(s.timerLag.Load() + (late-s.timerLag.Load())/8)
			for time.Now().Before(until) {
				// At most lead, and most often about half of it.
			}
		}
		ls.unpause(c)
	})
	if err != nil {
		ls.close()
	}
}

// minLead and maxLead bound how early a pause's timer fires (see pause).
const (
	minLead = 20 * time.Microsecond
	maxLead = 150 * time.Microsecond
)

// unpause goes on with a paused session, on its loop.
func (ls *loopSession) unpause(*netio.LoopConn) {
	if ls.mode != modePaused {
		return
	}
	ls.sent()
	ls.mode = modeCommand
	ls.c.SetReading(true)
	ls.run(ls.then)
	ls.resume()
}

// resume serves the input the session held while it could not (paused,
// stalled, or waiting for a slot), on the loop.
func (ls *loopSession) resume() {
	held := ls.held
	ls.held = nil
	ls.input(held)
}

// outHigh is the output a session's replies may queue before it stops
// taking input (stalls) until the client has read them: a client that
// pipelines commands without reading their replies waits, as on the
// goroutine engine, instead of filling netio's MaxQueued.
const outHigh = 256 << 10

// stall stops taking input until the output queued so far has been sent
// (loopWritable).
func (ls *loopSession) stall() {
	ls.mode = modeStalled
	ls.c.SetReading(false)
	ls.c.NotifyWritable()
}

// loopWritable goes on with a stalled session once its replies are sent.
func (s *Server) loopWritable(c *netio.LoopConn) {
	ls := c.Value().(*loopSession)
	ls.sent()
	if ls.mode != modeStalled {
		return
	}
	ls.mode = modeCommand
	c.SetReading(true)
	ls.resume()
}

// startData starts reading a message's DATA.
func (ls *loopSession) startData() {
	ss := ls.ss
	ls.mode = modeData
	ls.dec = dot.Decoder{
		Mode:    dot.Raw,
		Bare:    ss.cfg.Bare,
		MaxSize: ss.cfg.MaxSize,
		MaxLine: ss.cfg.MaxDataLineBytes,
	}
	ls.dropping, ls.discarded = false, 0
	ls.startReading()
}

// startReading starts the reading of message data (DATA's or a chunk's):
// its deadline and quick ACKs.
func (ls *loopSession) startReading() {
	ls.dataCalls = 0
	ls.dl.startData()
}

func (ls *loopSession) endData() { ls.dl.command() }

// A scratch is where a loop's sessions decode DATA into.
type scratch [32 << 10]byte

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// data decodes p, DATA's input, and at the end of the message replies to
// it; it returns how much of p it used.
func (ls *loopSession) data(p []byte) (used int) {
	ss := ls.ss
	ls.quickAck()
	buf := scratches.Get().(*scratch)
	defer scratches.Put(buf)
	bound := ss.cfg.MaxDiscardBytes
	for {
		var pre dot.Decoder
		if bound > 0 && !ls.dropping {
			pre = ls.dec
		}
		nd, ns, err := ls.dec.Transform(buf[:], p[used:], false)
		start := used
		used += ns
		if nd > 0 {
			ss.sink.Write(buf[:nd])
		}
		if ls.dec.Err() != nil && bound > 0 {
			// Counted from the byte after the problem's, the end marker
			// included, as textproto's DotReader counts for the goroutine
			// engine; at the bound with the block not ended, the session
			// cannot stay in step.
			if ls.dropping {
				ls.discarded += int64(ns)
			} else {
				ls.dropping = true
				ls.discarded = int64(ns - dotstop.Offset(pre, p[start:used]))
			}
			if ls.discarded > bound || ls.discarded == bound && !ls.dec.Done() {
				ls.dl.afterRead(used)
				ls.run(ss.tooMuchDiscarded)
				return used
			}
		}
		switch err {
		case dot.ErrShortDst:
			continue
		case nil:
			ls.dl.afterRead(used)
			return used
		case io.EOF:
			err = nil
		}
		ls.dl.afterRead(used)
		ls.mode = modeCommand
		ls.endData()
		if !ss.endMessage(err, ls.dec.Size(), 0) {
			ss.bw.Flush()
			ls.close()
		}
		return used
	}
}

// quickAck asks the kernel to acknowledge at once from the second call
// of a message's data on; see connIO.
func (ls *loopSession) quickAck() {
	if ls.dataCalls++; ls.dataCalls != 2 {
		return
	}
	if _, tcp := ls.c.RemoteAddr().(*net.TCPAddr); tcp {
		ls.c.Control(setQuickAck) // a hint: a failure is ignored
	}
	if h := ls.ss.s.h.ackNow; h != nil {
		h()
	}
}

// chunk starts reading a BDAT chunk of size bytes into the message.
func (ls *loopSession) chunk(size int64) bool {
	if r := ls.ss.r; r.R == nil {
		r.R = ls.ss.s.reader(&ls.feed) // let go of between chunks (subChunk)
	}
	ls.startReading()
	ls.left = size
	if size == 0 {
		return ls.subChunk(nil)
	}
	ls.mode = modeChunk
	return true
}

// chunkInput reads p, a chunk's bytes, and replies at the end of the
// chunk; it returns how much of p it used.
func (ls *loopSession) chunkInput(p []byte) int {
	ls.quickAck()
	n := int(min(int64(len(p)), ls.left))
	ls.dl.afterRead(n)
	if !ls.subChunk(p[:n]) {
		ls.close()
	}
	return n
}

// subChunk reads the bytes of the chunk at hand, p, as a chunk of their
// own: the message's line rules and limits run over chunks, so the data
// and its errors are the same as for the whole chunk at once. At the end
// of the chunk it replies; it returns false if the session ends.
func (ls *loopSession) subChunk(p []byte) bool {
	ss := ls.ss
	b := ss.bdat
	ls.left -= int64(len(p))
	ls.feed.b = p
	_, err := b.c.Next(int64(len(p)), b.last && ls.left == 0).WriteTo(ss.sink)
	if err != nil && !isDataError(err) {
		return false
	}
	if ls.left > 0 {
		if ss.chunkFailed(err, ls.left) {
			ls.run(ss.tooMuchDiscarded)
		}
		return true
	}
	ls.mode = modeCommand
	ls.endData()
	// The read buffer goes back to the pool until the next chunk: a
	// session between chunks holds none. It is empty (see feed).
	ss.r.R.Reset(nil)
	ss.s.readers.Put(ss.r.R)
	ss.r.R = nil
	return ss.chunkDone(err)
}

// skip throws away a refused chunk of size bytes, then runs then.
func (ls *loopSession) skip(size int64, then func() bool) bool {
	if size == 0 {
		return then()
	}
	ls.startReading()
	ls.mode, ls.left, ls.skipThen = modeSkip, size, then
	return true
}

// arm sets the connection's deadline for the input the session waits
// for: a command's, or the data's (see deadline).
func (ls *loopSession) arm() {
	switch ls.mode {
	case modeCommand, modeData, modeChunk, modeSkip, modeHandshake:
	default:
		return
	}
	at, ok, expired := ls.dl.beforeRead(ls.c.Now()) // the loop's time: no clock read a read
	switch {
	case !ok:
		return
	case expired:
		if ls.mode != modeHandshake {
			ls.ss.timeoutReply()
		} else {
			ls.ss.s.logHandshake(ls.ss.id, ls.ss.remote, os.ErrDeadlineExceeded)
		}
		ls.close()
		return
	}
	if next, set := moveDeadline(at, ls.setAt, ls.dl.data, ls.dl.timeout); set {
		ls.setAt = next
		ls.c.SetDeadline(next)
	}
}

// loopTimeout ends a session whose deadline passed with 421.
func (s *Server) loopTimeout(c *netio.LoopConn, err error) {
	ls := c.Value().(*loopSession)
	switch ls.mode {
	case modeClosed:
		return
	case modeHandshake: // nothing can be said to it
		s.logHandshake(ls.ss.id, ls.ss.remote, os.ErrDeadlineExceeded)
	default:
		ls.ss.timeoutReply()
	}
	ls.mode = modeClosed // netio closes it, close_notify after the 421
}

// loopShutdown is called for each session when the loops' Shutdown
// starts: a session goes on until its client quits (Server.Shutdown),
// unless the server is closing (Server.Close).
func (s *Server) loopShutdown(c *netio.LoopConn) {
	ls := c.Value().(*loopSession)
	select {
	case <-s.kill:
		ls.farewell()
	default:
		if ls.mode == modeWaiting {
			// Never greeted: the listen queue it stands for is gone.
			ls.farewell()
		}
	}
}

// farewell ends the session with the 421 of a server closing.
func (ls *loopSession) farewell() {
	switch ls.mode {
	case modeClosed:
		return
	case modeHandshake:
		ls.close() // nothing can be said to it
		return
	}
	bye := "421 4.3.2 Service shutting down, closing connection\r\n"
	if !ls.tls {
		bye = ls.ss.s.inClear(bye) // waiting for a slot under implicit TLS
	}
	ls.ss.bw.WriteString(bye)
	ls.close()
}

// loopClose ends the session of a connection the loop closed.
func (s *Server) loopClose(c *netio.LoopConn, err error) {
	ls := c.Value().(*loopSession)
	if ls.mode == modePaused && ls.then != nil && err != nil && !errors.Is(err, netio.ErrServerClosed) {
		// The client reset the connection during a delay (netio closes
		// a paused connection at its reset): the delayed command is
		// served now, as the goroutine engine serves it once its sleep
		// is over, so that a message whose 250 waited is counted in
		// Messages, and its reply, which cannot leave, in Unsent. A
		// callback's panic there is logged: netio drops a panic in
		// OnClose, and the session's end would never be counted.
		ls.mode = modeClosed
		s.guard(ls.ss.id, func() {
			ls.then()
			ls.ss.bw.Flush()
		})
	}
	ls.mode = modeClosed
	if ls.w.err != nil || errors.Is(err, netio.ErrUnsent) || errors.Is(err, netio.ErrPanic) {
		// The replies that did not leave: a panic drops the output.
		s.stats.unsent.Add(ls.owed)
	}
	if err != nil {
		ls.ss.quit = false // served, but its 221 was never sent: as on the goroutine engine
	}
	if errors.Is(err, netio.ErrPanic) {
		// A Config callback panicked on the loop: netio closed only its
		// connection, and this is the one trace of it.
		s.logf("smtpsink: session %d: %v", ls.ss.id, err)
	}
	s.endLoopSession(ls)
}

// endLoopSession counts the end of a session of the loops engine
// frees its slot and tells OnSessionEnd.
func (s *Server) endLoopSession(ls *loopSession) {
	if ls.untracked {
		return
	}
	ss := ls.ss
	s.mu.Lock()
	delete(s.live, ls)
	orphan := ls.granted && !ls.slot // its slot came, its session never began
	if !ls.slot {
		for i, w := range s.waiting {
			if w == ls {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				break
			}
		}
	}
	s.mu.Unlock()
	if orphan {
		s.freeSlot()
	}
	if ls.slot {
		if !ss.quit {
			s.stats.aborted.Add(1)
		}
		s.guard(ss.id, ss.release) // a Capture writer's Close
		s.stats.active.Add(^uint64(0))
		s.freeSlot()
		if s.cfg.OnSessionEnd != nil {
			s.guard(ss.id, func() {
				s.cfg.OnSessionEnd(SessionInfo{Session: ss.id, RemoteAddr: ss.remote, Messages: ss.nmsg, Quit: ss.quit})
			})
		}
	}
	s.leave()
}

// guard runs f, a Config callback's call as session id ends, and logs a
// panic in it to ErrorLog: netio would recover it where it could not be
// told, and the session's end would not be counted (Close would wait for
// it for ever).
func (s *Server) guard(id uint64, f func()) {
	defer func() {
		if v := recover(); v != nil {
			s.logf("smtpsink: session %d: panic in a callback as it ended: %v\n%s", id, v, debug.Stack())
		}
	}()
	f()
}

// freeSlot gives a session's slot of MaxConns to the first connection
// waiting for one, if any.
func (s *Server) freeSlot() {
	s.mu.Lock()
	if len(s.waiting) == 0 {
		s.slots--
		s.mu.Unlock()
		return
	}
	next := s.waiting[0]
	s.waiting = s.waiting[1:]
	next.granted = true // if it never begins, its end frees the slot
	s.mu.Unlock()
	next.c.Do(func(*netio.LoopConn) {
		if next.mode == modeWaiting {
			next.begin()
		}
	})
}

// startTLS starts the TLS handshake that follows its 220 (which the loop
// sends first); what the client sent after the STARTTLS line in the clear
// is dropped.
func (ls *loopSession) startTLS() bool {
	ls.startHandshake(false)
	return ls.mode == modeHandshake
}

// closeLoops ends every session of the loops engine with a 421 (on its
// loop; one in a TLS handshake is closed), and the loops once they are
// gone or closeGrace has passed.
func (s *Server) closeLoops() {
	s.startDrain()
	s.mu.Lock()
	for ls := range s.live {
		ls.c.Do(func(*netio.LoopConn) { ls.farewell() })
	}
	s.mu.Unlock()
}

// startDrain starts the loops' Shutdown, once: they accept no more.
func (s *Server) startDrain() {
	s.drainOnce.Do(func() {
		s.drained = make(chan struct{})
		go func() {
			s.loops.Shutdown(s.drainCtx)
			close(s.drained)
		}()
	})
}
