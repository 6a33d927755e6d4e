package smtpsink

import (
	"bufio"
	"errors"
	"net"
	"os"
	"time"
)

// connIO is the session's side of the connection: reads flush the pending
// replies first, so a reply waits in the buffer only while more input is
// buffered (RFC 2920); reads get the session's deadline (a command's, or
// the data's), and each write the timeout.
type connIO struct {
	c        net.Conn
	bw       *bufio.Writer
	timeout  time.Duration // 0: none
	dl       deadline
	setAt    time.Time // the read deadline last set on c
	now      func() time.Time
	timedOut bool            // a read ran out of time
	kill     <-chan struct{} // the server's: closed when it closes

	// When a message's data takes a second read, the session asks the
	// kernel to acknowledge at once from then on (quickAck, which lasts
	// until the next reply). A client that leaves Nagle's algorithm on
	// (Postfix's smtp-source does) holds the small last piece of a large
	// message until its earlier segments are acknowledged, and a server
	// in the middle of a message has no reply to carry the ACK: without
	// this, the kernel's delayed-ACK timer (40 ms on Linux) stalls about
	// every other 1 MiB message. A message that arrives in one read gets
	// its ACK with the reply, as without this.
	qa     *quickAck // nil if not TCP
	onAck  func()    // hooks.ackNow
	onRead func(int) // hooks.read
	inData bool      // reading a message's data
	nread  int       // reads since inData was set

	// The replies that accept a message, until they have left: where
	// each ends in the stream of replies, and how much of that stream
	// the connection took.
	owed []int64
	sent int64
}

// owe notes that the reply just buffered accepts a message.
func (f *connIO) owe() {
	i := 0
	for i < len(f.owed) && f.owed[i] <= f.sent {
		i++
	}
	f.owed = append(f.owed[:0], f.owed[i:]...)
	f.owed = append(f.owed, f.sent+int64(f.bw.Buffered()))
}

// unsent returns how many of the replies that accepted a message never
// left.
func (f *connIO) unsent() uint64 {
	var n uint64
	for _, at := range f.owed {
		if at > f.sent {
			n++
		}
	}
	return n
}

// errClosing ends a session's reads once the server is closing.
var errClosing = errors.New("smtpsink: server closing")

func (f *connIO) Read(p []byte) (int, error) {
	if f.bw.Buffered() > 0 {
		if err := f.bw.Flush(); err != nil {
			return 0, err
		}
	}
	if at, ok, expired := f.dl.beforeRead(f.now()); expired {
		f.timedOut = true
		return 0, os.ErrDeadlineExceeded
	} else if ok {
		f.setReadDeadline(at)
	}
	// Checked after setting the deadline: Server.Close closes kill and
	// then moves the deadline into the past, so either this sees kill
	// closed or the read below wakes up.
	select {
	case <-f.kill:
		return 0, errClosing
	default:
	}
	if f.inData {
		if f.nread == 1 {
			if f.qa != nil {
				f.qa.ack() // a hint: a failure shows in the read, if at all
			}
			if f.onAck != nil {
				f.onAck()
			}
		}
		f.nread++
	}
	n, err := f.c.Read(p)
	f.dl.afterRead(n)
	if f.onRead != nil && n > 0 {
		f.onRead(n)
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		select {
		case <-f.kill: // Close moved the deadline
			return n, errClosing
		default:
			f.timedOut = true
		}
	}
	return n, err
}

// setReadDeadline puts the deadline at on the connection, where it is
// not there yet (see moveDeadline).
func (f *connIO) setReadDeadline(at time.Time) {
	if next, set := moveDeadline(at, f.setAt, f.dl.data, f.timeout); set {
		f.setAt = next
		f.c.SetReadDeadline(next)
	}
}

// startData and endData bracket the reads of a message's data (or a
// chunk's): the data's deadline, and quick ACKs.
func (f *connIO) startData() { f.inData, f.nread = true, 0; f.dl.startData() }

func (f *connIO) endData() { f.inData = false; f.dl.command() }

func (f *connIO) Write(p []byte) (int, error) {
	timeout := f.timeout
	select {
	case <-f.kill:
		timeout = closeGrace // the 421 of a closing server
	default:
		if f.timedOut {
			timeout = closeGrace // the 421 of a session out of time
		}
	}
	if timeout > 0 {
		f.c.SetWriteDeadline(f.now().Add(timeout))
	}
	n, err := f.c.Write(p)
	f.sent += int64(n)
	return n, err
}
