package smtpsink

import (
	"fmt"
	"strings"
	"testing"
)

// Every way a client may end a session over implicit TLS, TLS 1.2 and
// 1.3, after the end of a message and RSET sent with it in one TCP write
// (the sink reads them, and the ending, at once): both engines give the
// replies the model says (all of them but after a reset, which comes once
// they are in) and end them alike (a record that fails its MAC with
// bad_record_mac), accept the message, and count the same (issue 27: the
// loops engine sent the alert of a bad record and lost the replies before
// it; the goroutine engine lost the replies before a TLS 1.2
// close_notify).
func TestTLSEndingsParity(t *testing.T) {
	prog := modelProg("EHLO c", "MAIL FROM:<a@b>", "RCPT TO:<r@b>", "DATA", []byte{0}, "RSET")
	type row struct {
		ending modelEnding
		junk   uint8
	}
	var rows []row
	for e := range numEndings {
		if e != endJunk {
			rows = append(rows, row{ending: e})
			continue
		}
		for j := range modelJunk {
			rows = append(rows, row{ending: e, junk: uint8(j)})
		}
	}
	for _, tls12 := range []bool{false, true} {
		for _, r := range rows {
			if r.ending == endEmpty && tls12 {
				continue // TLS 1.3's only
			}
			ms := modelSession{prog: prog, knobs: 0x30, over: overImplicitTLS, tls12: tls12, ending: r.ending, junk: r.junk, whole: true}
			name := fmt.Sprintf("%v/TLS1.%d", r.ending, map[bool]int{false: 3, true: 2}[tls12])
			if r.ending == endJunk {
				name += fmt.Sprintf("/%d", r.junk)
			}
			t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				g := runModelTLSSession(t, EngineGoroutine, ms)
				l := runModelTLSSession(t, EngineLoops, ms)
				if len(g.wantMsgs) != 1 {
					t.Fatalf("the model accepts %d messages, not 1", len(g.wantMsgs))
				}
				for _, x := range []struct {
					e Engine
					r modelResult
				}{{EngineGoroutine, g}, {EngineLoops, l}} {
					if err := x.r.check(); err != nil {
						t.Errorf("%s engine: %v", x.e, err)
					}
					// RFC 8446 §5.2, RFC 5246 §7.2.2: the sink answers a
					// record that fails its MAC with bad_record_mac.
					if r.ending == endBadMAC && (x.r.readErr == nil || !strings.Contains(x.r.readErr.Error(), "bad record MAC")) {
						t.Errorf("%s engine: the client's reading ended with %v, not bad_record_mac", x.e, x.r.readErr)
					}
					st := x.r.stats
					if st.Sessions != 1 || st.TLS != 1 || st.Messages != 1 || st.Aborted != map[bool]uint64{false: 1, true: 0}[x.r.wantQuit] {
						t.Errorf("%s engine: stats %+v", x.e, st)
					}
				}
				gs, ls := g.stats, l.stats
				// The replies end alike (close_notify, or the same alert),
				// but after a reset, the client's own doing.
				sameEnd := r.ending == endRST || fmt.Sprint(g.readErr) == fmt.Sprint(l.readErr)
				if fmt.Sprint(g.codes) != fmt.Sprint(l.codes) || fmt.Sprint(g.msgs) != fmt.Sprint(l.msgs) || g.quit != l.quit || fmt.Sprintf("%+v", gs) != fmt.Sprintf("%+v", ls) || !sameEnd {
					t.Errorf("engines differ:\ngoroutine %v %v quit %v %+v, then %v\nloops     %v %v quit %v %+v, then %v",
						g.codes, g.msgs, g.quit, gs, g.readErr, l.codes, l.msgs, l.quit, ls, l.readErr)
				}
			})
		}
	}
}
