package smtpsink

import (
	"io"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/textproto"
)

// chunkState is a message in progress in BDAT chunks (RFC 3030).
type chunkState struct {
	c         *textproto.Chunks
	n         int   // chunks so far
	discarded int64 // bytes of the chunks read after the message failed
	size      int64 // the size of the chunk being read
	last      bool  // it is the LAST one
	// failed is set once the message has failed, at the start of the
	// chunk at hand or in it.
	failed bool
}

// chunkFailed is called after a piece of the chunk at hand, with left
// bytes of the chunk still to come, in which the message met err: it
// reports whether the session must end, as those bytes, to be thrown
// away, pass MaxDiscardBytes. They are not added to the chunks' count
// (discarded), which counts whole chunks, the same however the chunk
// came in pieces.
func (ss *session) chunkFailed(err error, left int64) (tooMuch bool) {
	if err == nil || ss.bdat.failed {
		return false
	}
	ss.bdat.failed = true
	return ss.cfg.MaxDiscardBytes > 0 && ss.bdat.discarded+left > ss.cfg.MaxDiscardBytes
}

// bdatArgs are the arguments of a BDAT command.
type bdatArgs struct {
	size  int64
	last  bool
	sized bool // the chunk's size could be read: that many bytes follow the line
	ok    bool // the syntax is RFC 3030's: size, and LAST or nothing after it
}

// parseBDAT parses what follows the verb BDAT on its line, separator
// included: a space, a chunk size and an optional LAST. The size is read
// even where the rest is not right (extra spaces or tabs, an unknown
// word), so that the chunk can be read and the session kept in step.
func parseBDAT(args string) bdatArgs {
	var a bdatArgs
	f := strings.FieldsFunc(args, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) == 0 || len(f[0]) > 18 || strings.TrimLeft(f[0], "0123456789") != "" {
		return a
	}
	a.size, _ = strconv.ParseInt(f[0], 10, 64)
	a.sized = true
	arg, sp := strings.CutPrefix(args, " ")
	num, rest, _ := strings.Cut(arg, " ")
	switch {
	case !sp:
	case num != f[0]:
	case rest == "":
		a.ok = true
	case strings.EqualFold(rest, "LAST"):
		a.last, a.ok = true, true
	}
	return a
}

// bdatSyntax is the reply to a BDAT command line that is not RFC 3030's.
const bdatSyntax = "5.5.4 Syntax: BDAT size [LAST]"

// bdatUnsized ends a session whose BDAT command has no chunk size that
// can be read: where the chunk ends is unknown, and its bytes must not be
// taken for commands.
func (ss *session) bdatUnsized() bool {
	ss.reply(421, "4.5.4 Syntax: BDAT size [LAST]: no chunk size that can be read (missing, not a number, or over 18 digits), closing connection")
	return false
}

// skipChunk reads a chunk of size bytes and throws it away, and then
// returns then(); it returns false if the session ends.
func (ss *session) skipChunk(size int64, then func() bool) bool {
	if m := ss.cfg.MaxDiscardBytes; m > 0 && size > m {
		return ss.tooMuchDiscarded()
	}
	if ss.loop != nil {
		return ss.loop.skip(size, then)
	}
	ss.cio.startData()
	k := ss.r.Chunks(textproto.ChunkOptions{Binary: true, MaxBytes: -1}).Next(size, true)
	_, err := k.WriteTo(io.Discard)
	ss.cio.endData()
	return err == nil && then()
}

// bdatCmd serves BDAT: the chunk that follows the command line is always
// read to its end, so the session stays in step whatever the reply, and
// its bytes are never taken for commands. A command line that is not
// right but has a size gets 501 once its chunk has been read, and ends
// the transaction (its data would miss a chunk); one without a size that
// can be read ends the session with 421. A chunk with a problem in the
// data (too large, a line too long, a bare CR or LF) gets the same reply
// as a message sent with DATA would, and so do the message's later
// chunks, LAST included. It returns false if the session ends.
func (ss *session) bdatCmd(args string) bool {
	a := parseBDAT(args)
	switch {
	case !a.sized:
		return ss.bdatUnsized()
	case !a.ok:
		return ss.skipChunk(a.size, func() bool {
			ss.reset()
			ss.reply(501, bdatSyntax)
			return true
		})
	}
	size, last := a.size, a.last
	f, forced := ss.s.k.force["BDAT"]
	if r, ok := ss.rule(StageBDAT, strings.TrimSpace(args)); ok && !forced {
		f, forced = r, true
	}
	if code, text := ss.checkData(); forced || code != 0 {
		return ss.skipChunk(size, func() bool {
			if forced {
				ss.reset()
				return ss.forced(f)
			}
			ss.reply(code, text)
			return true
		})
	}
	if ss.bdat == nil {
		ss.startHash()
		ss.bdat = &chunkState{c: ss.reader().Chunks(textproto.ChunkOptions{
			Binary:       ss.body == "BINARYMIME",
			Bare:         ss.cfg.Bare,
			MaxBytes:     limitOrNone(ss.cfg.MaxSize),
			MaxLineBytes: int(limitOrNone(int64(ss.cfg.MaxDataLineBytes))),
		})}
	}
	ss.bdat.n++
	ss.bdat.size, ss.bdat.last = size, last
	if ss.bdat.failed = ss.bdat.c.Err() != nil; ss.bdat.failed {
		// The message has failed: this chunk is read only to be thrown
		// away.
		if ss.bdat.discarded += size; ss.cfg.MaxDiscardBytes > 0 && ss.bdat.discarded > ss.cfg.MaxDiscardBytes {
			return ss.tooMuchDiscarded()
		}
	}
	if ss.loop != nil {
		return ss.loop.chunk(size)
	}
	// The chunk is read in pieces, what has come of it at a time, as the
	// loops engine reads it: after the piece in which the message fails,
	// the rest of the chunk is known to be thrown away, and
	// MaxDiscardBytes bounds it before it is read. A piece is read as a
	// chunk of its own: the message's line rules and limits run over
	// chunks, so the data and its errors are the same as for the whole
	// chunk at once.
	ss.cio.startData()
	br := ss.r.R
	for left := size; ; {
		n := left
		if left > 0 {
			if _, err := br.Peek(1); err == nil {
				n = min(left, int64(br.Buffered()))
			}
		}
		left -= n
		_, err := ss.bdat.c.Next(n, last && left == 0).WriteTo(ss.sink)
		switch {
		case err != nil && !isDataError(err):
			ss.cio.endData()
			return false // the peer left or the connection failed
		case left == 0:
			ss.cio.endData()
			return ss.chunkDone(err)
		case ss.chunkFailed(err, left):
			ss.cio.endData()
			return ss.tooMuchDiscarded()
		}
	}
}

// chunkDone replies to a BDAT chunk read to its end, whose data met err
// (a data error or nil); it returns false if the session ends.
func (ss *session) chunkDone(err error) bool {
	if ss.bdat.last {
		return ss.endMessage(err, ss.bdat.c.Size(), ss.bdat.n)
	}
	if err != nil {
		ss.reply(dataReply(err))
		return true
	}
	b := append(ss.text[:0], "2.0.0 "...)
	b = strconv.AppendInt(b, ss.bdat.size, 10)
	b = append(b, " octets received"...)
	ss.text = b
	ss.replyText(250, b)
	return true
}

// refuseChunk refuses a BDAT command whatever its arguments: the chunk
// is read and thrown away if its size can be read, else the session ends.
func (ss *session) refuseChunk(args string, code int, text string) bool {
	a := parseBDAT(args)
	if !a.sized {
		return ss.bdatUnsized()
	}
	return ss.skipChunk(a.size, func() bool {
		ss.reply(code, text)
		return true
	})
}

// bdatOff serves BDAT when CHUNKING is off: an unknown command (500), but
// a chunk whose size can be read is read and thrown away first, so that
// its bytes are not taken for commands.
func (ss *session) bdatOff(args string) bool {
	if !parseBDAT(args).sized {
		ss.reply(500, "5.5.2 Error: command not recognized")
		return true
	}
	return ss.refuseChunk(args, 500, "5.5.2 Error: command not recognized")
}
