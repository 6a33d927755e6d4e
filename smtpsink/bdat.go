package smtpsink

import (
	"io"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/textproto"
)

// chunkState is a message in progress in BDAT chunks (RFC 3030).
type chunkState struct {
	c *textproto.Chunks
	n int // chunks so far
}

// parseBDAT parses the arguments of BDAT: a chunk size and an optional
// LAST.
func parseBDAT(arg string) (size int64, last, ok bool) {
	num, rest, _ := strings.Cut(arg, " ")
	if num == "" || len(num) > 18 || strings.TrimLeft(num, "0123456789") != "" {
		return 0, false, false
	}
	size, _ = strconv.ParseInt(num, 10, 64)
	switch {
	case rest == "":
		return size, false, true
	case strings.EqualFold(rest, "LAST"):
		return size, true, true
	}
	return 0, false, false
}

// bdatCmd serves BDAT: the chunk that follows the command line is always
// read to its end, so the session stays in step whatever the reply. A
// chunk with a problem in the data (too large, a line too long, a bare CR
// or LF) gets the same reply as a message sent with DATA would, and so do
// the message's later chunks, LAST included. It returns false if the
// session ends.
func (ss *session) bdatCmd(arg string) bool {
	size, last, ok := parseBDAT(arg)
	if !ok {
		// The size of the chunk is unknown: what follows is read as
		// commands.
		ss.reply(501, "5.5.4 Syntax: BDAT size [LAST]")
		return true
	}
	f, forced := ss.s.k.force["BDAT"]
	if code, text := ss.checkData(); forced || code != 0 {
		k := ss.r.Chunks(textproto.ChunkOptions{Binary: true, MaxBytes: -1}).Next(size, true)
		if _, err := k.WriteTo(io.Discard); err != nil {
			return false
		}
		if forced {
			ss.reset()
			return ss.forced(f)
		}
		ss.reply(code, text)
		return true
	}
	if ss.bdat == nil {
		ss.startHash()
		ss.bdat = &chunkState{c: ss.r.Chunks(textproto.ChunkOptions{
			Binary:       ss.body == "BINARYMIME",
			Bare:         ss.cfg.Bare,
			MaxBytes:     limitOrNone(ss.cfg.MaxSize),
			MaxLineBytes: int(limitOrNone(int64(ss.cfg.MaxDataLineBytes))),
		})}
	}
	ss.bdat.n++
	ss.cio.startData()
	_, err := ss.bdat.c.Next(size, last).WriteTo(ss.sink)
	ss.cio.endData()
	if err != nil && !isDataError(err) {
		return false // the peer left or the connection failed
	}
	if last {
		return ss.endMessage(err, ss.bdat.c.Size(), ss.bdat.n)
	}
	if err != nil {
		ss.reply(dataReply(err))
		return true
	}
	b := append(ss.text[:0], "2.0.0 "...)
	b = strconv.AppendInt(b, size, 10)
	b = append(b, " octets received"...)
	ss.text = b
	ss.replyText(250, b)
	return true
}
