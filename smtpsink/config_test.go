package smtpsink

import (
	"crypto/tls"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/dot"
)

// Every Config that Listen cannot serve is refused with ErrConfig, among
// them texts that would put a line break into a reply: the client would
// read a second reply the server never meant, and fall out of step.
func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"negative limit":               {MaxSize: -1},
		"engine":                       {Engine: "threads"},
		"bare policy":                  {Bare: dot.BareNormalize + 1},
		"auth without TLS":             {Auth: true},
		"TLS required, none":           {TLSRequired: true},
		"TLS, no certificate":          {TLS: &tls.Config{}},
		"implicit TLS, no certificate": {TLS: &tls.Config{}, TLSImplicit: true},
		"delay, unknown verb":          {Delay: map[string]time.Duration{"FROB": 1}},
		"force, unknown verb":          {Force: map[string]Reply{"FROB": {Code: 500}}},
		"force, code 250":              {Force: map[string]Reply{"RCPT": {Code: 250}}},
		"force text, CRLF":             {Force: map[string]Reply{"RCPT": {Code: 450, Text: "a\r\n250 ok"}}},
		"force text, LF":               {Force: map[string]Reply{"CONNECT": {Code: 554, Text: "a\n250 ok"}}},
		"rule text, CR":                {Rules: []Rule{{Stage: "rcpt", Reply: Reply{Code: 550, Text: "no\r"}}}},
		"rule, unknown stage":          {Rules: []Rule{{Stage: "quit", Reply: Reply{Code: 550}}}},
		"rule, odds NaN":               {Rules: []Rule{{Stage: "rcpt", Odds: math.NaN(), Reply: Reply{Code: 550}}}},
		"rule, odds over 100":          {Rules: []Rule{{Stage: "rcpt", Odds: 101, Reply: Reply{Code: 550}}}},
		"hostname, CRLF":               {Hostname: "x\r\n250 evil"},
		"hostname, NUL":                {Hostname: "x\x00"},
		"greeting, CRLF":               {Greeting: "x\r\n250 evil"},
		"IP version 5":                 {IPVersion: 5},
		"negative window":              {WindowSize: -1},
		"window over a C int":          {WindowSize: 1 << 31},
		"negative read delay":          {DataReadDelay: -1},
		// What only AUTH uses, without Auth (it was ignored).
		"users without Auth":      {AuthUsers: map[string]string{"u": "p"}},
		"mechanisms without Auth": {AuthMechanisms: []string{"PLAIN"}},
		"plaintext without Auth":  {AuthPlaintext: true},
	} {
		cfg.Addr = "127.0.0.1:0"
		if s, err := Listen(t.Context(), cfg); !errors.Is(err, ErrConfig) {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: Listen: %v, want ErrConfig", name, err)
		}
	}
	s, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Hostname: "mx.example",
		Force: map[string]Reply{"RCPT": {Code: 450, Text: "4.2.0 try again; tab\tok"}}})
	if err != nil {
		t.Fatalf("a good config: %v", err)
	}
	s.Close()
}
