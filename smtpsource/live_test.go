package smtpsource

import (
	"crypto/tls"
	"fmt"
	"testing"
)

// After a run, Live's counts are the Result's, every connection closed;
// before it, zero.
func TestLive(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{tlsConf: srvTLS, ext: []string{"PIPELINING"}, reply: func(verb, arg string) string {
		if verb == "RCPT" && arg == "TO:<2to@server.test>" {
			return "550 no"
		}
		return ""
	}}
	cfg := base(f.start(t))
	live := &Live{}
	if c := live.Counts(); c.Started != 0 || len(c.Replies) != 0 {
		t.Errorf("before the run: %+v", c)
	}
	cfg.Live, cfg.Messages, cfg.Sessions, cfg.Recipients, cfg.TLS, cfg.TLSConfig = live, 6, 2, 2, true, &tls.Config{RootCAs: roots}
	res := runOK(t, cfg)
	c := live.Counts()
	if c.Open != 0 || c.Connections != res.Connections || c.Started != res.Started || c.Delivered != res.Delivered || c.Failed != res.Failed ||
		c.RcptOK != res.RcptOK || c.Bytes != res.Bytes || c.TLSHandshakes != res.TLS.Handshakes || c.Rejections != res.Rejections || c.Rejections != 6 ||
		fmt.Sprint(c.Replies) != fmt.Sprint(res.Replies) {
		t.Errorf("live %+v\nresult %+v", c, res)
	}
}
