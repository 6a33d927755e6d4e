//go:build linux && !netio_portable

package netio

import "golang.org/x/sys/unix"

// tlsReadable is readable for a TLS connection: what is read goes to the
// handshake, or to the tls.Conn, whose records the Handler gets, one at
// a time.
func (l *loop) tlsReadable(c *LoopConn) {
	t := c.tls
	if (t.stopped || c.offer) && t.state == tlsOpen {
		// What was read while reading was off.
		t.stopped = false
		ok := l.tlsOffer(c) && l.tlsRecords(c)
		t.unlend()
		if !ok || !l.sendAndCheck(c) {
			return
		}
	}
	read := 0
	for !c.closed && !c.closing && !c.waiting && !c.eof && !c.unread && !t.rawEOF && !t.paused && t.state != tlsFailed {
		if read >= l.budget {
			if !c.more {
				c.more = true
				l.more = append(l.more, c)
			}
			return
		}
		buf := l.buf
		if t.state == tlsHandshake {
			// No more than the handshake may hold: when it is full, the
			// socket is left unread until it has room (tlsRoom) or is
			// over (handshakeDone).
			room := t.room()
			if room == 0 {
				t.paused = true
				break
			}
			buf = buf[:min(len(buf), room)]
		}
		n, err := unix.Read(c.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			t.rawEOF = true
		}
		if n > 0 || t.rawEOF {
			read += n
			c.readAt = l.now
			if !l.tlsInput(c, buf[:max(n, 0)]) {
				return
			}
		}
		if err != nil && err != unix.EAGAIN {
			l.close(c, err)
			return
		}
		if err != nil || (n < len(buf) && !c.hup) {
			break // the socket is empty
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
	}
}

// tlsResume reads c again after its handshake's input was full: at once,
// since what came meanwhile raises no new event (edge-triggered).
func (l *loop) tlsResume(c *LoopConn) {
	if !c.closed && !c.closing {
		l.tlsReadable(c)
	}
}
