package smtpsink

import (
	"maps"
	"testing"
)

// Stats.Positive counts the 2xx and 3xx replies, by code: a message's
// once its data has its reply (each recipient's in LMTP), the rest at the
// session's end; the 4xx and 5xx stay in Errors alone.
func TestStatsPositive(t *testing.T) {
	for _, lmtp := range []bool{false, true} {
		ended := make(chan SessionInfo, 1)
		s := startSink(t, Config{LMTP: lmtp, OnSessionEnd: func(i SessionInfo) { ended <- i }}, hooks{})
		c := dial(t, s)
		hello, dots := "EHLO", 1
		if lmtp {
			hello, dots = "LHLO", 2
		}
		c.cmd(250, hello+" client.test")
		c.cmd(250, "NOOP")
		c.cmd(250, "MAIL FROM:<a@b>")
		c.cmd(250, "RCPT TO:<c@d>")
		c.cmd(250, "RCPT TO:<e@f>")
		c.cmd(354, "DATA")
		c.cmd(250, "x\r\n.")
		if lmtp {
			c.expect(250)
		}
		want := map[int]uint64{220: 1, 250: uint64(5 + dots), 354: 1}
		if st := s.Stats(); !maps.Equal(st.Positive, want) || len(st.Errors) != 0 {
			t.Errorf("LMTP %v, after the message: positive %v, errors %v; want %v", lmtp, st.Positive, st.Errors, want)
		}
		c.cmd(500, "BOGUS")
		c.cmd(250, "RSET")
		c.cmd(221, "QUIT")
		<-ended
		want[250]++
		want[221] = 1
		if st := s.Stats(); !maps.Equal(st.Positive, want) || !maps.Equal(st.Errors, map[int]uint64{500: 1}) {
			t.Errorf("LMTP %v, at the end: positive %v, errors %v; want %v and 500: 1", lmtp, st.Positive, st.Errors, want)
		}
	}
}
