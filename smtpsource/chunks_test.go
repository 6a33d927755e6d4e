package smtpsource

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wirespeed/wirespeed/smtpsink"
)

// LMTP with BDAT: a chunk refused before LAST fails the message, and the
// session stays in step whichever way the server answers the chunks left:
// once per recipient for LAST, as RFC 2033 §4.2 has every end of data
// answered (smtp-sink), or once, the transaction being gone (go-smtp).
// Every other message has its second chunk refused; every message is
// accounted for, every reply is matched to its command, the connection
// is kept (with Reuse), and the messages delivered are the ones the
// server took. Pipelined or not, kept connections or not.
func TestLMTPRefusedChunk(t *testing.T) {
	for _, reset := range []bool{false, true} {
		for _, pipe := range []bool{true, false} {
			for _, reuse := range []bool{true, false} {
				name := fmt.Sprintf("chunkReset %v, pipelining %v, reuse %v", reset, pipe, reuse)
				var mails, chunk atomic.Int64
				f := &fakeServer{lmtp: true, chunkReset: reset, ext: []string{"PIPELINING", "CHUNKING"}, reply: func(verb, arg string) string {
					switch verb {
					case "MAIL":
						mails.Add(1)
						chunk.Store(0)
					case "BDAT":
						if chunk.Add(1) == 2 && mails.Load()%2 == 1 {
							return "552 5.3.4 message too big"
						}
					}
					return ""
				}}
				cfg := base(f.start(t))
				cfg.LMTP, cfg.Chunking, cfg.Pipelining, cfg.ChunkSize, cfg.Length = true, true, pipe, 1024, 3000
				cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Digests = 6, 3, reuse, true
				res := runOK(t, cfg)
				wantConns := int64(1)
				if !reuse {
					wantConns = 6
				}
				if res.Started != 6 || res.Delivered != 3 || res.Failed != 3 || res.IOErrors+res.ProtocolErrors != 0 || res.Connections != wantConns {
					t.Errorf("%s: %+v", name, res)
				}
				sameCodes(t, name, res, f)
				if taken := f.accepted(); int64(len(taken)) != res.Delivered {
					t.Errorf("%s: delivered %d, the server took %d", name, res.Delivered, len(taken))
				} else if v, err := Verify(strings.NewReader(sentLog(taken)), res.Digests); err != nil || !v.OK() {
					t.Errorf("%s: verify %+v %v", name, v, err)
				}
			}
		}
	}
}

// The case of issue 19, against wirespeed's sink (smtp-sink -L -size
// 1000; smtp-source -L -chunking -pipelining -chunk-size 1024 -l 3000 -r 3
// -d -m 3 -size=false, as SIZE= would have the MAIL refused): every chunk
// is refused, the sink answers LAST once per
// recipient, and the source reads each of those replies as one: the three
// messages fail on the session's one connection, and the sink and the
// source count the same sessions, messages and refusals.
func TestLMTPRefusedChunkSmtpsink(t *testing.T) {
	srv := startSmtpsinkCfg(t, smtpsink.Config{LMTP: true, MaxSize: 1000})
	cfg := Config{Addr: srv.Addr().String(), LMTP: true, Chunking: true, Pipelining: true, ChunkSize: 1024, Length: 3000, Recipients: 3, Reuse: true, Messages: 3, NoSize: true}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Started != 3 || res.Delivered != 0 || res.Failed != 3 || res.Connections != 1 || res.IOErrors+res.ProtocolErrors != 0 {
		t.Fatalf("%+v", res)
	}
	if err := srv.Shutdown(context.Background()); err != nil { // the sessions have ended
		t.Fatal(err)
	}
	st := srv.Stats()
	var refused int64
	for _, codes := range res.Replies {
		for code, n := range codes {
			if code >= 400 {
				refused += n
			}
		}
	}
	if st.Sessions != 1 || st.Aborted != 0 || st.Messages != 0 || int64(st.ErrorCount()) != refused || refused != res.Rejections || res.Replies["dot"][552] != 9 || res.Replies["rset"][250] != 3 {
		t.Errorf("the sink counted %+v; the source %d refusals, replies %v", st, refused, res.Replies)
	}
}
