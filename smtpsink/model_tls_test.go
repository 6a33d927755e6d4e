package smtpsink

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The protocol fuzzer's session (model_test.go) over plain TCP, STARTTLS
// or implicit TLS, TLS 1.2 or 1.3, on either engine: the client's
// plaintext is cut into records at random points (crypto/tls writes a
// record per Write), the records' bytes are sent in TCP writes cut and
// joined at random points, and the session ends in one of the ways a
// client may end it: QUIT, a FIN, a reset, close_notify, a record cut
// short, bytes that are no record, a record that fails its MAC. The model
// says what the replies and the accepted messages must be: every command
// whose line end arrived before the ending is answered, also when the
// ending is an error the sink must answer with an alert (the replies go
// first), but for a reset, after which nothing can be said of the
// replies but that they are a prefix of the model's, and the sink must
// still accept no message the model does not.

// A modelTransport is how a fuzzed session reaches the sink.
type modelTransport uint8

const (
	overTCP modelTransport = iota
	overSTARTTLS
	overImplicitTLS
	numTransports
)

func (m modelTransport) String() string {
	return [...]string{"TCP", "STARTTLS", "implicit TLS"}[m]
}

// A modelEnding is how the client ends a fuzzed session, after its
// stream.
type modelEnding uint8

const (
	endQuit        modelEnding = iota // "QUIT" after the stream (not cut), then a FIN
	endFIN                            // the TCP stream ends; under TLS, without close_notify
	endRST                            // a reset, once some of the replies are in
	endCloseNotify                    // TLS: close_notify, and no FIN
	endPartial                        // TLS: a record ("NOOP") cut short, then a FIN
	endJunk                           // TLS: bytes that are no good record (modelJunk)
	endBadMAC                         // TLS: a record ("NOOP") with a byte of its ciphertext flipped
	endEmpty                          // TLS 1.3 (else bad MAC): records of no content, then a FIN
	numEndings
)

func (e modelEnding) String() string {
	return [...]string{"QUIT", "FIN", "RST", "close_notify", "partial record", "junk", "bad MAC", "empty records"}[e]
}

// modelJunk are the junk endings: bytes that the sink reads in full
// before it fails them (what it left unread would make its kernel reset
// the connection, and the client could lose replies it is owed).
var modelJunk = [][]byte{
	[]byte("QUIT\r"),       // a command in the clear: a record header with a bad version
	{23, 3, 3, 0xff, 0xff}, // application data longer than a record may be
	append([]byte{99, 3, 3, 0, 32}, make([]byte, 32)...), // a record of an unknown type
	append([]byte{22, 3, 3, 0, 32}, make([]byte, 32)...), // a handshake record (not encrypted) after the handshake
}

// A modelSession is one fuzzed session.
type modelSession struct {
	prog   []byte // the program (modelStream)
	knobs  uint8  // the sink's settings (decodeKnobs)
	cut    uint16 // bytes cut off the stream's end
	over   modelTransport
	tls12  bool // TLS 1.2, not 1.3
	ending modelEnding
	junk   uint8  // which modelJunk, for endJunk
	seed   uint64 // the record and write splits, and when a reset comes
	// whole sends the stream as one record and all the client's bytes
	// (the ending's included) in one TCP write, which the sink reads at
	// once (under implicit TLS, once the greeting is in), and resets only
	// once all the replies are in.
	whole bool
}

func (ms modelSession) String() string {
	v := "TLS 1.3"
	switch {
	case ms.over == overTCP:
		v = ""
	case ms.tls12:
		v = "TLS 1.2"
	}
	e := ms.ending.String()
	if ms.ending == endJunk {
		e = fmt.Sprintf("junk %q", modelJunk[int(ms.junk)%len(modelJunk)])
	}
	return fmt.Sprintf("%v %s, ending %s, knobs %+v, seed %#x, whole %v", ms.over, v, e, decodeKnobs(ms.knobs), ms.seed, ms.whole)
}

// A modelResult is what a session got, and what the model said it must.
type modelResult struct {
	stream          []byte // what the client sent in plaintext (the ending's extras not included)
	ending          modelEnding
	codes, want     []int
	msgs, wantMsgs  []modelMessage
	quit, wantQuit  bool
	notTLS          int   // messages accepted with Message.TLS wrong
	stats           Stats // once the session ended
	readErr         error // what ended the client's reading of replies
	wantOwedReplies bool  // the ending is not a reset: every reply is owed
}

// modelTLSConfigs are a server's and a client's TLS configurations, made
// once: a certificate a session is slower to make than to use.
var modelTLSConfigs = sync.OnceValues(func() (*tls.Config, *tls.Config) {
	return testTLS(panicTB{})
})

// panicTB is the testing.TB of modelTLSConfigs, which no test owns.
type panicTB struct{ testing.TB }

func (panicTB) Helper()           {}
func (panicTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// heldConn is the client's TCP connection under its tls.Client: once
// held, what the client writes (one record per Write, under TLS) is kept
// for the test to send as it likes, changed or not.
type heldConn struct {
	*net.TCPConn
	mu   sync.Mutex
	held bool
	recs [][]byte
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return c.TCPConn.Write(p)
	}
	c.recs = append(c.recs, bytes.Clone(p))
	return len(p), nil
}

// hold starts keeping the writes.
func (c *heldConn) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// take returns the writes kept so far, and forgets them.
func (c *heldConn) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.recs
	c.recs = nil
	return r
}

// Deadlines are the test's business once the writes are held
// (crypto/tls's close_notify sets one in the past when it is done).
func (c *heldConn) SetDeadline(t time.Time) error {
	if c.isHeld() {
		return nil
	}
	return c.TCPConn.SetDeadline(t)
}

func (c *heldConn) SetWriteDeadline(t time.Time) error {
	if c.isHeld() {
		return nil
	}
	return c.TCPConn.SetWriteDeadline(t)
}

func (c *heldConn) isHeld() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// randomSplit cuts b at random points: not at all, at a few places, or
// into pieces of 1 to 8 bytes.
func randomSplit(b []byte, rng *rand.Rand) [][]byte {
	if len(b) < 2 {
		return [][]byte{b}
	}
	var cuts []int
	switch rng.IntN(3) {
	case 0:
	case 1:
		for range 1 + rng.IntN(8) {
			cuts = append(cuts, 1+rng.IntN(len(b)-1))
		}
	case 2:
		for i := 1 + rng.IntN(8); i < len(b); i += 1 + rng.IntN(8) {
			cuts = append(cuts, i)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var parts [][]byte
	last := 0
	for _, c := range cuts {
		parts = append(parts, b[last:c])
		last = c
	}
	return append(parts, b[last:])
}

// readReply reads one reply, all its lines, and returns its code, or 0
// and the error that ended the stream first.
func readReply(br *bufio.Reader) (int, error) {
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return 0, err
		}
		if len(l) >= 4 && l[3] != '-' {
			var code int
			fmt.Sscan(l[:3], &code)
			return code, nil
		}
	}
}

// runModelTLSSession runs one session on a sink of engine e and returns
// what it got and what the model says.
func runModelTLSSession(t *testing.T, e Engine, ms modelSession) modelResult {
	t.Helper()
	k := decodeKnobs(ms.knobs)
	k.restarted = ms.over == overSTARTTLS // the stream comes after EHLO and STARTTLS
	tlsOn := ms.over != overTCP
	end := ms.ending % numEndings
	if !tlsOn && end > endRST {
		end = endFIN // a TLS ending over TCP: the stream's cut does as much
	}
	if end == endEmpty && ms.tls12 {
		end = endBadMAC // emptyRecords makes TLS 1.3's only
	}
	stream := modelStream(ms.prog)
	if end == endQuit {
		// Not cut: the line QUIT would end is none the model knows.
		stream = append(stream, "QUIT\r\n"...)
	} else {
		stream = stream[:len(stream)-int(ms.cut)%(len(stream)+1)]
	}
	want, wantMsgs, wantQuit, rest := model(k, stream)
	// What follows the session's end is not sent: data the sink never
	// reads makes its kernel reset the connection, which may lose
	// replies. Nor is the ending, if the sink ends the session itself
	// (QUIT, 421, a forced close): the client sees that and goes.
	stream = stream[:len(stream)-rest]
	if _, _, _, after := model(k, append(slices.Clip(stream), "NOOP\r\n"...)); after > 0 && end != endRST && end != endQuit {
		end = endFIN
	}
	if ms.over == overSTARTTLS {
		want = want[1:] // the greeting came before TLS
	}
	res := modelResult{stream: stream, ending: end, want: want, wantMsgs: wantMsgs, wantQuit: wantQuit, wantOwedReplies: end != endRST}

	srvTLS, cliTLS := modelTLSConfigs()
	cfg := Config{Engine: e, LMTP: k.lmtp, MaxSize: k.maxSize, MaxCommandBytes: 64, MaxRecipients: 3,
		Bare: dot.BareKeep, Digest: digest.MD5, Timeout: time.Minute, NoSMTPUTF8: k.noUTF8}
	switch k.dot {
	case 1:
		cfg.Force = map[string]Reply{".": {Code: 450}}
	case 2:
		cfg.Force = map[string]Reply{".": {Close: true}}
	}
	if tlsOn {
		cfg.TLS, cfg.TLSImplicit = srvTLS, ms.over == overImplicitTLS
	}
	var got messages
	ended := make(chan SessionInfo, 1)
	cfg.OnMessage, cfg.OnSessionEnd = got.add, func(i SessionInfo) { ended <- i }
	s := startSink(t, cfg, hooks{readBuf: k.readBuf})

	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tcp := nc.(*net.TCPConn)
	hc := &heldConn{TCPConn: tcp}
	var app io.Writer = hc // the plaintext's way
	var in io.Reader = tcp // the replies'
	var tc *tls.Conn
	var secret trafficKey // the client's TLS 1.3 traffic key, for endEmpty
	if tlsOn {
		if ms.over == overSTARTTLS {
			br := bufio.NewReader(tcp)
			c1, _ := readReply(br)
			hello := "EHLO c\r\nSTARTTLS\r\n"
			if k.lmtp {
				hello = "LHLO c\r\nSTARTTLS\r\n"
			}
			tcp.Write([]byte(hello))
			c2, _ := readReply(br)
			c3, _ := readReply(br)
			if c1 != 220 || c2 != 250 || c3 != 220 || br.Buffered() > 0 {
				t.Fatalf("before STARTTLS: %d %d %d, %d bytes more", c1, c2, c3, br.Buffered())
			}
		}
		cc := cliTLS.Clone()
		cc.MinVersion, cc.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
		if ms.tls12 {
			cc.MinVersion, cc.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		}
		var keys bytes.Buffer
		cc.KeyLogWriter = &keys
		tc = tls.Client(hc, cc)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		if end == endEmpty {
			secret = trafficSecret(t, keys.String(), tc.ConnectionState())
		}
		app, in = tc, tc
	}
	hc.hold()

	rng := rand.New(rand.NewPCG(ms.seed, ms.seed^0x9e3779b97f4a7c15))
	resetAfter := len(want)
	if end == endRST && !ms.whole {
		resetAfter = rng.IntN(len(want) + 1)
	}
	gotSome := make(chan struct{}) // closed once resetAfter replies are in, or reading has ended
	gotOne := make(chan struct{})  // closed once a reply is in, or reading has ended
	replies := make(chan []int, 1)
	var readErr error // how the replies ended: io.EOF, an alert, ...
	go func() {
		var codes []int
		var once, once1 sync.Once
		some := func() { once.Do(func() { close(gotSome) }) }
		one := func() { once1.Do(func() { close(gotOne) }) }
		defer one()
		if resetAfter == 0 {
			some()
		}
		br := bufio.NewReader(in)
		for {
			code, err := readReply(br)
			if code == 0 {
				readErr = err
				break
			}
			one()
			if codes = append(codes, code); len(codes) == resetAfter {
				some()
			}
		}
		some()
		replies <- codes
	}()

	if ms.whole {
		if ms.over == overImplicitTLS {
			<-gotOne // the greeting: the stream comes after the handshake, in a read of its own
		}
		app.Write(stream)
	} else {
		for _, p := range randomSplit(stream, rng) {
			app.Write(p)
		}
	}
	switch end {
	case endCloseNotify:
		tc.CloseWrite()
	case endPartial, endBadMAC:
		tc.Write([]byte("NOOP\r\n"))
	}
	recs := hc.take()
	switch end {
	case endPartial:
		last := recs[len(recs)-1]
		recs[len(recs)-1] = last[:1+rng.IntN(len(last)-1)]
	case endBadMAC:
		last := recs[len(recs)-1]
		last[5+rng.IntN(len(last)-5)] ^= 1 << rng.IntN(8) // past the header
	case endJunk:
		recs = append(recs, modelJunk[int(ms.junk)%len(modelJunk)])
	case endEmpty:
		// Each Write of the client's since the handshake was a record.
		// 40 records, as in issue 27, sent in one write; else 17:
		// crypto/tls fails the 17th in a row, and what the sink leaves
		// unread as it closes makes its kernel reset the connection,
		// which may lose the replies before it.
		n := 17
		if ms.whole {
			n = 40
		}
		recs = append(recs, secret.emptyRecords(uint64(len(recs)), n))
	}
	out := bytes.Join(recs, nil)
	if ms.whole {
		tcp.Write(out)
	} else {
		for _, p := range randomSplit(out, rng) {
			tcp.Write(p) // fails if the sink has left first
		}
	}
	switch end {
	case endQuit, endFIN, endPartial, endEmpty:
		tcp.CloseWrite()
	case endRST:
		<-gotSome
		tcp.SetLinger(0)
		tcp.Close()
	}
	info := <-ended
	res.codes = <-replies
	res.readErr = readErr
	res.quit = info.Quit
	for _, m := range got.all() {
		res.msgs = append(res.msgs, modelMessage{m.Size, m.Chunks, m.Digest.String(), m.SMTPUTF8})
		if m.TLS != tlsOn {
			res.notTLS++
		}
	}
	res.stats = s.Stats()
	return res
}

// check reports where a session's result departs from the model.
func (r modelResult) check() error {
	if r.notTLS > 0 {
		return fmt.Errorf("%d messages with Message.TLS wrong", r.notTLS)
	}
	if !r.wantOwedReplies {
		switch {
		case len(r.codes) > len(r.want) || fmt.Sprint(r.codes) != fmt.Sprint(r.want[:len(r.codes)]):
			return fmt.Errorf("reset: replies %v, want a prefix of %v", r.codes, r.want)
		case len(r.msgs) > len(r.wantMsgs) || fmt.Sprint(r.msgs) != fmt.Sprint(r.wantMsgs[:len(r.msgs)]):
			return fmt.Errorf("reset: messages %v, want a prefix of %v", r.msgs, r.wantMsgs)
		case r.quit && !r.wantQuit:
			return fmt.Errorf("reset: a clean QUIT the model did not see")
		}
		return nil
	}
	if fmt.Sprint(r.codes) != fmt.Sprint(r.want) || fmt.Sprint(r.msgs) != fmt.Sprint(r.wantMsgs) || r.quit != r.wantQuit {
		return fmt.Errorf("\nreplies  %v\nmodel    %v\nmessages %v\nmodel    %v\nquit %v, model %v",
			r.codes, r.want, r.msgs, r.wantMsgs, r.quit, r.wantQuit)
	}
	return nil
}

// runModelTLS runs a session on both engines and checks each against the
// model.
func runModelTLS(t *testing.T, ms modelSession) {
	t.Helper()
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		r := runModelTLSSession(t, e, ms)
		if err := r.check(); err != nil {
			t.Errorf("%s engine, %v (as sent: ending %v)\nstream %q: %v", e, ms, r.ending, r.stream, err)
		}
	}
}

// modelTLSSeeds are seeds of FuzzSessionModelTLS beyond modelSeeds, which
// it runs over each transport and with each ending: the endings of
// issue 27 after the end of a message.
var modelTLSSeeds = []modelSession{
	// The end of a message, RSET and close_notify in one TCP write
	// (TLS 1.2: crypto/tls returns the data with io.EOF).
	{prog: modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0}, "RSET"),
		knobs: 0x30, over: overImplicitTLS, tls12: true, ending: endCloseNotify, whole: true},
	// The end of a message, then a record that fails its MAC, in one read.
	{prog: modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0}, "RSET"),
		knobs: 0x30, over: overImplicitTLS, ending: endBadMAC, whole: true},
	// BDAT LAST, then junk, over STARTTLS.
	{prog: modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "BDAT LAST", "abc"),
		knobs: 0x30, over: overSTARTTLS, ending: endJunk, junk: 1, whole: true},
}

// FuzzSessionModelTLS checks the sink against the model over fuzzed
// sessions on every transport and both engines (go test -fuzz
// FuzzSessionModelTLS); go test runs the seeds. mode: the transport
// ((mode&3)%3) and TLS 1.2 (mode&4); ending: the ending (ending%numEndings) and the
// junk (ending>>4). Minimizing an input takes 500 runs (two sessions
// each) at most (tooltest.LimitMinimizing).
func FuzzSessionModelTLS(f *testing.F) {
	tooltest.LimitMinimizing(f, 500)
	add := func(ms modelSession) {
		mode := uint8(ms.over)
		if ms.tls12 {
			mode |= 4
		}
		f.Add(ms.prog, ms.knobs, ms.cut, mode, uint8(ms.ending)|ms.junk<<4, ms.seed, ms.whole)
	}
	for i, s := range modelSeeds {
		for j := range 2 {
			n := 2*i + j
			add(modelSession{prog: s.prog, knobs: s.knobs, cut: s.cut, over: modelTransport(n % 3), tls12: n%5 < 2,
				ending: modelEnding(n % int(numEndings)), junk: uint8(n / 7), seed: uint64(n)})
		}
	}
	for _, ms := range modelTLSSeeds {
		add(ms)
	}
	f.Fuzz(func(t *testing.T, prog []byte, knobs uint8, cut uint16, mode uint8, ending uint8, seed uint64, whole bool) {
		if len(prog) > 4096 {
			return
		}
		runModelTLS(t, modelSession{prog: prog, knobs: knobs, cut: cut, over: modelTransport((mode & 3) % 3), tls12: mode&4 != 0,
			ending: modelEnding(ending % uint8(numEndings)), junk: ending >> 4, seed: seed, whole: whole})
	})
}

// A trafficKey is the key and IV of a TLS 1.3 client's application
// data, from its key log: the test can write records the client would
// not (crypto/tls writes no record of no content).
type trafficKey struct {
	aead cipher.AEAD
	iv   []byte
}

// trafficSecret makes the client's trafficKey from its key log, for
// TLS 1.3 with AES-GCM (skipping the test under another TLS 1.3 suite),
// or the zero trafficKey under TLS 1.2.
func trafficSecret(t *testing.T, keyLog string, st tls.ConnectionState) trafficKey {
	t.Helper()
	if st.Version != tls.VersionTLS13 {
		return trafficKey{}
	}
	var secret []byte
	for _, l := range strings.Split(keyLog, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "CLIENT_TRAFFIC_SECRET_0" {
			secret, _ = hex.DecodeString(f[2])
		}
	}
	h, keyLen := sha256.New, 16
	switch st.CipherSuite {
	case tls.TLS_AES_128_GCM_SHA256:
	case tls.TLS_AES_256_GCM_SHA384:
		h, keyLen = sha512.New384, 32
	default:
		// crypto/tls picks ChaCha20-Poly1305 on a machine without AES
		// hardware, which the standard library does not export.
		t.Skipf("cipher suite %s: emptyRecords knows AES-GCM only", tls.CipherSuiteName(st.CipherSuite))
	}
	// HKDF-Expand-Label (RFC 8446 §7.1), with no context.
	label := func(l string, n int) []byte {
		info := []byte{byte(n >> 8), byte(n), byte(len("tls13 " + l))}
		info = append(append(info, "tls13 "+l...), 0)
		out, err := hkdf.Expand(h, secret, string(info), n)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	block, err := aes.NewCipher(label("key", keyLen))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return trafficKey{aead: aead, iv: label("iv", 12)}
}

// emptyRecords returns n application data records of no content (RFC
// 8446 §5.4: the inner plaintext is its content type alone), the first
// with the sequence number seq.
func (k trafficKey) emptyRecords(seq uint64, n int) []byte {
	var out []byte
	for i := range uint64(n) {
		nonce := bytes.Clone(k.iv)
		for j := range 8 {
			nonce[len(nonce)-1-j] ^= byte((seq + i) >> (8 * j))
		}
		hdr := []byte{23, 3, 3, 0, byte(1 + k.aead.Overhead())}
		out = append(out, hdr...)
		out = k.aead.Seal(out, nonce, []byte{23}, hdr)
	}
	return out
}
