package smtpsink

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The protocol fuzzer's session: a stream of commands, message data and
// chunks made from a program of bytes, sent to a sink over TCP, cut short
// by up to cut bytes, then ended with a half-close or a reset. A model of
// the sink, a plain interpreter of the same stream written apart from the
// sink's code, says what the replies and the accepted messages (size,
// chunks, digest) must be.

// The command lines a program's bytes choose from (the ops below add
// data and chunks).
var modelLines = []string{
	"EHLO c", "HELO c", "LHLO c", "MAIL FROM:<a@b>", "MAIL FROM:<a@b> BODY=BINARYMIME",
	"RCPT TO:<r@b>", "RSET", "NOOP", "QUIT", ".", "CONNECT x", "FROB", "", "DATA x",
	"NOOP " + strings.Repeat("n", 70), // longer than the fuzzer's MaxCommandBytes
	// Addresses that are not ASCII: they need SMTPUTF8 on MAIL, and
	// then UTF-8 (the last is Latin-1).
	"MAIL FROM:<jörg@b>", "MAIL FROM:<jörg@b> SMTPUTF8", "RCPT TO:<ü@b>", "RCPT TO:<\xfc@b>",
}

// numLines is len(modelLines).
const numLines = 19

// The ops of a program after the plain lines: DATA with a body, BDAT
// chunks (the next byte is the size, the bytes after it the chunk), and
// BDAT lines that are not right.
const (
	opData = numLines + iota
	opBDAT
	opBDATLast
	opBDATSpace // "BDAT n LAST ": sized, not right
	opBDATNoSize
	numOps
)

// The lines of a body sent with DATA (dot-stuffed on the way); when DATA
// is refused, the client's stream goes on and these are commands.
var modelBody = []string{"x", ".y", "", ".", "QUIT", "RSET", "MAIL FROM:<a@b>", "BDAT 2"}

// modelStream turns a program into the bytes a client sends.
func modelStream(prog []byte) []byte {
	var b []byte
	next := func(i *int) byte {
		*i++
		if *i < len(prog) {
			return prog[*i]
		}
		return 0
	}
	for i := 0; i < len(prog); i++ {
		switch op := int(prog[i]) % numOps; {
		case op < len(modelLines):
			b = append(b, modelLines[op]+"\r\n"...)
		case op == opData:
			b = append(b, "DATA\r\n"...)
			for range next(&i) % 4 {
				l := modelBody[next(&i)%byte(len(modelBody))]
				if strings.HasPrefix(l, ".") {
					l = "." + l
				}
				b = append(b, l+"\r\n"...)
			}
			b = append(b, ".\r\n"...)
		default:
			n := int(next(&i) % 24)
			switch op {
			case opBDAT:
				b = fmt.Appendf(b, "BDAT %d\r\n", n)
			case opBDATLast:
				b = fmt.Appendf(b, "BDAT %d LAST\r\n", n)
			case opBDATSpace:
				b = fmt.Appendf(b, "BDAT %d LAST \r\n", n)
			case opBDATNoSize:
				b = append(b, "BDAT x\r\n"...)
			}
			for range n {
				b = append(b, next(&i))
			}
		}
	}
	return b
}

// modelKnobs are the sink's settings for a fuzzed session.
type modelKnobs struct {
	lmtp    bool
	dot     int // Force["."]: 0 none, 1 450, 2 close without a reply
	maxSize int64
	readBuf int
	noUTF8  bool // Config.NoSMTPUTF8
	// restarted: the stream follows STARTTLS, which began the session
	// anew (RFC 3207 §4.2): MAIL needs HELO or EHLO first, as in LMTP.
	// Not a knob of the fuzzer's byte: model_tls_test.go sets it.
	restarted bool
}

func decodeKnobs(k uint8) modelKnobs {
	return modelKnobs{
		lmtp:    k&1 != 0,
		dot:     int(k>>1&3) % 3,
		maxSize: int64(k >> 3 & 1 * 20),
		readBuf: []int{16, 64, 4096, readBufSize}[k>>4&3],
		noUTF8:  k&0x40 != 0,
	}
}

// A modelMessage is a message the model accepts.
type modelMessage struct {
	size   int64
	chunks int
	sum    string
	utf8   bool // MAIL declared SMTPUTF8
}

var (
	bdatOK    = regexp.MustCompile(`^BDAT ([0-9]{1,18})( LAST)?$`)
	bdatSized = regexp.MustCompile(`^BDAT[ \t]+([0-9]{1,18})([ \t]|$)`)
)

// model answers the stream as the sink must: the reply codes, the
// messages accepted and whether the session ended with QUIT. rest is
// what of the stream follows the command that ended it, if the sink ended
// it (QUIT, 421, a forced close): the sink never reads that.
func model(k modelKnobs, in []byte) (codes []int, msgs []modelMessage, quit bool, rest int) {
	line := func() (string, bool) {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			return "", false // cut off: not a command
		}
		l := strings.TrimSuffix(string(in[:i]), "\r")
		in = in[i+1:]
		return l, true
	}
	take := func(n int) ([]byte, bool) {
		if len(in) < n {
			return nil, false
		}
		p := in[:n]
		in = in[n:]
		return p, true
	}
	var greeted, esmtp, inTx, binary, utf8, inBDAT, bdatTooBig bool
	var nrcpt, chunks int
	var data []byte
	reset := func() {
		inTx, binary, utf8, inBDAT, bdatTooBig, nrcpt, chunks, data = false, false, false, false, false, 0, 0, nil
	}
	reply := func(c int) { codes = append(codes, c) }
	checkData := func() int {
		switch {
		case !inTx:
			return 503
		case nrcpt == 0 && k.lmtp:
			return 503
		case nrcpt == 0:
			return 554
		}
		return 0
	}
	// endMessage answers a message's end; false: the session ends.
	endMessage := func(tooBig bool) bool {
		n := 1
		if k.lmtp {
			n = nrcpt
		}
		code := 250
		switch {
		case k.dot == 2:
			return false
		case k.dot == 1:
			code = 450
		case tooBig:
			code = 552
		}
		if code == 250 {
			sum := md5.Sum(data)
			msgs = append(msgs, modelMessage{int64(len(data)), chunks, fmt.Sprintf("%x", sum), utf8})
		}
		for range n {
			reply(code)
		}
		reset()
		return true
	}
	reply(220)
	for {
		l, ok := line()
		if !ok {
			return
		}
		if len(l) > 64 {
			reply(500)
			continue
		}
		hello := func(verb string) {
			if (verb == "LHLO") != k.lmtp {
				reply(500)
				return
			}
			reset()
			greeted, esmtp = true, verb != "HELO"
			reply(250)
		}
		switch {
		case l == "EHLO c" || l == "HELO c" || l == "LHLO c":
			hello(l[:4])
		case strings.HasPrefix(l, "MAIL FROM:"):
			bin := strings.Contains(l, "BINARY")
			declares := strings.HasSuffix(l, " SMTPUTF8")
			switch {
			case !greeted && (k.lmtp || k.restarted) || inTx:
				reply(503) // SMTP needs no HELO first, as with Postfix, but after STARTTLS
			case (bin || declares) && !esmtp, declares && k.noUTF8:
				reply(555)
			case strings.Contains(l, "ö") && !declares:
				reply(553) // RFC 6531 §3.5: not ASCII, SMTPUTF8 not declared (or not offered)
			default:
				inTx, binary, utf8 = true, bin, declares
				reply(250)
			}
		case strings.HasPrefix(l, "RCPT TO:"):
			switch {
			case !inTx || inBDAT:
				reply(503)
			case l != "RCPT TO:<r@b>" && !utf8:
				reply(553)
			case l == "RCPT TO:<\xfc@b>":
				reply(501) // declared, but not UTF-8
			case nrcpt >= 3:
				reply(452)
			default:
				nrcpt++
				reply(250)
			}
		case l == "RSET":
			reset()
			reply(250)
		case l == "NOOP":
			reply(250)
		case l == "QUIT":
			reply(221)
			return codes, msgs, true, len(in)
		case l == "DATA x":
			reply(501)
		case l == "DATA":
			code := checkData()
			if code == 0 && (inBDAT || binary) {
				code = 503
			}
			if code != 0 {
				reply(code)
				continue
			}
			reply(354)
			for {
				d, ok := line()
				if !ok {
					return
				}
				if d == "." {
					break
				}
				data = append(data, strings.TrimPrefix(d, ".")+"\r\n"...)
			}
			if !endMessage(k.maxSize > 0 && int64(len(data)) > k.maxSize) {
				return codes, msgs, false, len(in)
			}
		case strings.HasPrefix(strings.ToUpper(l), "BDAT"):
			m := bdatSized.FindStringSubmatch(l)
			if m == nil {
				reply(421)
				return codes, msgs, false, len(in)
			}
			var n int
			fmt.Sscan(m[1], &n)
			chunk, ok := take(n)
			if !ok {
				return
			}
			good := bdatOK.FindStringSubmatch(l)
			if good == nil {
				reset()
				reply(501)
				continue
			}
			if code := checkData(); code != 0 {
				reply(code)
				continue
			}
			inBDAT = true
			chunks++
			data = append(data, chunk...)
			if k.maxSize > 0 && int64(len(data)) > k.maxSize {
				bdatTooBig = true
			}
			if good[2] == "" {
				reply(map[bool]int{false: 250, true: 552}[bdatTooBig])
				continue
			}
			if !endMessage(bdatTooBig) {
				return codes, msgs, false, len(in)
			}
		default:
			reply(500)
		}
	}
}

// countingConn counts what the sink has read and says when it has read
// all the client sent.
type countingConn struct {
	n, want int64
	all     chan struct{}
}

// read is the sink's hooks.read.
func (c *countingConn) read(n int) {
	if atomic.AddInt64(&c.n, int64(n)) == c.want && n > 0 {
		close(c.all)
	}
}

// runModelSession sends the program's stream, cut short by cut bytes, to
// a sink with the knobs, and checks the replies and messages against the
// model's.
func runModelSession(t *testing.T, prog []byte, knobs uint8, cut uint16, reset bool) {
	k := decodeKnobs(knobs)
	stream := modelStream(prog)
	stream = stream[:len(stream)-int(cut)%(len(stream)+1)]
	wantCodes, wantMsgs, wantQuit, rest := model(k, stream)
	// What follows the end is not sent: data the sink never reads makes
	// its kernel reset the connection, which may lose replies.
	stream = stream[:len(stream)-rest]

	cfg := Config{LMTP: k.lmtp, MaxSize: k.maxSize, MaxCommandBytes: 64, MaxRecipients: 3,
		Bare: dot.BareKeep, Digest: digest.MD5, Timeout: time.Minute, NoSMTPUTF8: k.noUTF8}
	switch k.dot {
	case 1:
		cfg.Force = map[string]Reply{".": {Code: 450}}
	case 2:
		cfg.Force = map[string]Reply{".": {Close: true}}
	}
	var got messages
	ended := make(chan SessionInfo, 1)
	cfg.OnMessage, cfg.OnSessionEnd = got.add, func(i SessionInfo) { ended <- i }
	cc := &countingConn{want: int64(len(stream)), all: make(chan struct{})}
	s := startSink(t, cfg, hooks{readBuf: k.readBuf, read: cc.read})
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	replies := make(chan []int, 1)
	go func() {
		var codes []int
		br := bufio.NewReader(c)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				break
			}
			if len(l) < 4 || l[3] == '-' {
				continue
			}
			var code int
			fmt.Sscan(l[:3], &code)
			codes = append(codes, code)
		}
		replies <- codes
	}()
	wrote := make(chan struct{})
	go func() {
		c.Write(stream) // fails if the sink has left first
		close(wrote)
	}()
	var info SessionInfo
	if reset {
		// Once the sink has read it all (or left), the peer resets: the
		// replies may be lost, and the sink may stop before the commands
		// still in its buffer, but it accepts no message the model does
		// not.
		if len(stream) == 0 {
			close(cc.all)
		}
		select {
		case <-cc.all:
		case info = <-ended:
			ended <- info
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	} else {
		<-wrote
		c.(*net.TCPConn).CloseWrite()
	}
	info = <-ended
	codes := <-replies
	ms := got.all()
	var gotMsgs []modelMessage
	for _, m := range ms {
		gotMsgs = append(gotMsgs, modelMessage{m.Size, m.Chunks, m.Digest.String(), m.SMTPUTF8})
	}
	if reset {
		if len(gotMsgs) > len(wantMsgs) || fmt.Sprint(gotMsgs) != fmt.Sprint(wantMsgs[:len(gotMsgs)]) {
			t.Fatalf("stream %q knobs %+v, reset: messages %v, want a prefix of %v", stream, k, gotMsgs, wantMsgs)
		}
		if info.Quit && !wantQuit {
			t.Fatalf("stream %q: reset: a clean QUIT the model did not see", stream)
		}
		return
	}
	if fmt.Sprint(codes) != fmt.Sprint(wantCodes) || fmt.Sprint(gotMsgs) != fmt.Sprint(wantMsgs) || info.Quit != wantQuit {
		t.Fatalf("stream %q knobs %+v:\nreplies  %v\nmodel    %v\nmessages %v\nmodel    %v\nquit %v, model %v",
			stream, k, codes, wantCodes, gotMsgs, wantMsgs, info.Quit, wantQuit)
	}
}

// modelProg spells a program with names for its ops: a modelLines entry,
// or "DATA" with body line indexes, or "BDAT"/"BDAT LAST"/"BDAT LAST
// SPACE" followed by the chunk, or "BDAT NOSIZE".
func modelProg(ops ...any) []byte {
	var p []byte
	for i := 0; i < len(ops); i++ {
		switch o := ops[i].(type) {
		case string:
			switch o {
			case "DATA":
				body := ops[i+1].([]byte)
				i++
				p = append(p, byte(opData), byte(len(body)))
				p = append(p, body...)
			case "BDAT", "BDAT LAST", "BDAT LAST SPACE":
				chunk := ops[i+1].(string)
				i++
				op := map[string]int{"BDAT": opBDAT, "BDAT LAST": opBDATLast, "BDAT LAST SPACE": opBDATSpace}[o]
				p = append(p, byte(op), byte(len(chunk)))
				p = append(p, chunk...)
			case "BDAT NOSIZE":
				p = append(p, byte(opBDATNoSize), 0)
			default:
				found := false
				for j, l := range modelLines {
					if l == o {
						p, found = append(p, byte(j)), true
						break
					}
				}
				if !found {
					panic("modelProg: unknown op " + o)
				}
			}
		}
	}
	return p
}

// modelSeeds are the fuzzer's seed corpus, which go test runs as a test:
// the cut-off commands of RFC 5321 §2.3.8, refused data whose lines turn
// into commands, chunks that must never be commands, forced replies,
// LMTP.
var modelSeeds = []struct {
	prog  []byte
	knobs uint8
	cut   uint16
}{
	// BDAT 3 "abc", then "BDAT 0 LAST" without its CRLF: no message.
	{modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "BDAT", "abc", "BDAT LAST", ""), 0, 2},
	{modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "BDAT", "abc", "BDAT LAST", ""), 0, 0},
	// A BDAT LAST whose chunk is cut short; a DATA whose end line is.
	{modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "BDAT LAST", "abcdef"), 0x30, 2},
	{modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0, 1}), 0x10, 1},
	// QUIT without its CRLF is not a clean QUIT.
	{modelProg("HELO c", "NOOP", "QUIT"), 0, 1},
	{modelProg("HELO c", "NOOP", "QUIT"), 0, 0},
	// Refused DATA: the body's lines, QUIT among them, are commands.
	{modelProg("EHLO c", "DATA", []byte{0, 2, 3, 5, 4}), 0, 0},
	// Malformed BDAT: the sized chunk (commands in it) is read; the
	// unsized one ends the session.
	{modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "BDAT LAST SPACE", "RSET\r\nQUIT\r\n", "NOOP", "BDAT NOSIZE", "QUIT"), 0x20, 0},
	// A client's "." and "CONNECT x" with -r . and with -q .
	{modelProg("EHLO c", ".", "CONNECT x", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0}, ".", "QUIT"), 0x02, 0},
	{modelProg("EHLO c", ".", "CONNECT x", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0}, ".", "QUIT"), 0x04, 0},
	// LMTP, too large, BINARYMIME, a chunk with a bare LF, a long line.
	{modelProg("LHLO c", "MAIL FROM:<a@b> BODY=BINARYMIME", "RCPT TO:<r@b>", "RCPT TO:<r@b>", "DATA", []byte{0},
		"BDAT", "0123456789\n", "BDAT LAST", "0123456789abc", "NOOP "+strings.Repeat("n", 70), "QUIT"), 0x09, 0},
	{modelProg("LHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "RCPT TO:<r@b>", "RCPT TO:<r@b>", "RCPT TO:<r@b>",
		"BDAT", "ab\r", "BDAT LAST", "\ncd", "QUIT"), 0x01, 0},
	// Addresses that are not ASCII: refused (553) unless MAIL declared
	// SMTPUTF8, and then refused if not UTF-8 (501); with SMTPUTF8 not
	// offered (0x40), refused, and the parameter unknown (555); after
	// HELO, the parameter needs EHLO.
	{modelProg("EHLO c", "MAIL FROM:<jörg@b>", "MAIL FROM:<a@b>", "RCPT TO:<ü@b>", "RCPT TO:<r@b>", "DATA", []byte{0},
		"MAIL FROM:<jörg@b> SMTPUTF8", "RCPT TO:<ü@b>", "RCPT TO:<\xfc@b>", "BDAT LAST", "abc", "QUIT"), 0, 0},
	{modelProg("EHLO c", "MAIL FROM:<jörg@b>", "MAIL FROM:<a@b>", "RCPT TO:<ü@b>", "RCPT TO:<r@b>", "DATA", []byte{0},
		"MAIL FROM:<jörg@b> SMTPUTF8", "RCPT TO:<ü@b>", "RCPT TO:<\xfc@b>", "BDAT LAST", "abc", "QUIT"), 0x40, 0},
	{modelProg("HELO c", "MAIL FROM:<jörg@b> SMTPUTF8", "MAIL FROM:<jörg@b>", "MAIL FROM:<a@b>", "RCPT TO:<\xfc@b>", "QUIT"), 0, 0},
	{modelProg("LHLO c", "MAIL FROM:<jörg@b> SMTPUTF8", "RCPT TO:<ü@b>", "RCPT TO:<r@b>", "RCPT TO:<\xfc@b>",
		"BDAT LAST", "abc", "MAIL FROM:<jörg@b>", "QUIT"), 0x01, 0},
}

// FuzzSessionModel checks the sink against the model over fuzzed
// sessions (go test -fuzz FuzzSessionModel); go test runs the seeds.
// Minimizing an input takes 1000 sessions at most (tooltest.LimitMinimizing).
func FuzzSessionModel(f *testing.F) {
	tooltest.LimitMinimizing(f, 1000)
	for _, s := range modelSeeds {
		f.Add(s.prog, s.knobs, s.cut, false)
		f.Add(s.prog, s.knobs, s.cut, true)
	}
	f.Fuzz(func(t *testing.T, prog []byte, knobs uint8, cut uint16, reset bool) {
		if len(prog) > 4096 {
			return
		}
		runModelSession(t, prog, knobs, cut, reset)
	})
}

func init() {
	if len(modelLines) != numLines {
		panic("numLines")
	}
}
