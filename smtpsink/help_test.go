package smtpsink

import (
	"strings"
	"testing"
)

// HELP lists the commands the session serves, and only those: each one
// listed is served (a fresh session's reply to it alone is not 500 or
// 502, not recognized or not implemented), and each extension EHLO
// offers that brings a command (STARTTLS, AUTH, CHUNKING's BDAT, XCLIENT,
// XFORWARD) is listed, in the clear and over TLS.
func TestHelpListsServedCommands(t *testing.T) {
	srv, cli := testTLS(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		tls  bool // HELP over STARTTLS
	}{
		{"default", Config{}, false},
		{"LMTP", Config{LMTP: true}, false},
		{"no ESMTP", Config{NoESMTP: true}, false},
		{"extensions off", Config{NoChunking: true, NoXCLIENT: true, NoXFORWARD: true}, false},
		{"TLS and AUTH, before TLS", Config{TLS: srv, Auth: true}, false},
		{"TLS and AUTH, over TLS", Config{TLS: srv, Auth: true}, true},
		{"AUTH in the clear", Config{Auth: true, AuthPlaintext: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSink(t, tc.cfg, hooks{})
			hello := "EHLO c"
			switch {
			case tc.cfg.LMTP:
				hello = "LHLO c"
			case tc.cfg.NoESMTP:
				hello = "HELO c"
			}
			session := func() (*client, string) {
				c := dial(t, s)
				if tc.tls {
					c.cmd(250, hello)
					c = c.startTLS(cli)
				}
				return c, c.cmd(250, hello)
			}
			c, ehlo := session()
			help := c.cmd(214, "HELP")
			text, ok := strings.CutPrefix(help, "2.0.0 Commands: ")
			if !ok {
				t.Fatalf("HELP: %q", help)
			}
			listed := map[string]bool{}
			for _, verb := range strings.Fields(text) {
				listed[verb] = true
			}
			offered := map[string]bool{}
			for _, l := range strings.Split(ehlo, "\n")[1:] {
				kw, _, _ := strings.Cut(l, " ")
				offered[kw] = true
			}
			for kw, verb := range map[string]string{"STARTTLS": "STARTTLS", "AUTH": "AUTH", "CHUNKING": "BDAT", "XCLIENT": "XCLIENT", "XFORWARD": "XFORWARD"} {
				if !tc.cfg.NoESMTP && offered[kw] != listed[verb] { // no EHLO to compare with
					t.Errorf("EHLO offers %s: %v; HELP lists %s: %v\nEHLO: %q\nHELP: %q", kw, offered[kw], verb, listed[verb], ehlo, help)
				}
			}
			for verb := range listed {
				c, _ := session()
				if err := c.PrintfLine("%s", verb); err != nil {
					t.Fatal(err)
				}
				code, msg, err := c.ReadResponse(0)
				if code == 0 {
					t.Fatalf("%s: %v", verb, err)
				}
				if code == 500 || code == 502 {
					t.Errorf("HELP lists %s, which gets %d %s", verb, code, msg)
				}
				c.raw.Close()
			}
		})
	}
}
