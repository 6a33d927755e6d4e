package smtpsink

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
)

// overCInt is one past the largest C int, as a variable: an int of 32
// bits cannot hold it, and wraps to a negative.
var overCInt int64 = math.MaxInt32 + 1

// Every Config that Listen cannot serve is refused with a *ConfigError
// (ErrConfig) naming the field at fault, among them texts that would put
// a line break into a reply: the client would read a second reply the
// server never meant, and fall out of step.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name, field string
		cfg         Config
	}{
		// An empty Addr listened on every address at a random port, and
		// "unix:" on a Linux autobind socket no client could name.
		{"no address", "Addr", Config{}},
		{"unix, no path", "Addr", Config{Addr: "unix:"}},
		{"negative size", "MaxSize", Config{MaxSize: -1}},
		{"negative command line", "MaxCommandBytes", Config{MaxCommandBytes: -1}},
		{"negative data line", "MaxDataLineBytes", Config{MaxDataLineBytes: -1}},
		{"negative recipients", "MaxRecipients", Config{MaxRecipients: -1}},
		{"negative abort delay", "AbortDataDelay", Config{AbortData: true, AbortDataDelay: -1}},
		{"negative read delay", "DataReadDelay", Config{DataReadDelay: -1}},
		{"negative window", "WindowSize", Config{WindowSize: -1}},
		{"window over a C int", "WindowSize", Config{WindowSize: int(overCInt)}}, // negative where int has 32 bits
		{"IP version 5", "IPVersion", Config{IPVersion: 5}},
		{"hostname, CRLF", "Hostname", Config{Hostname: "x\r\n250 evil"}},
		{"hostname, NUL", "Hostname", Config{Hostname: "x\x00"}},
		{"greeting, CRLF", "Greeting", Config{Greeting: "x\r\n250 evil"}},
		{"digest", "Digest", Config{Digest: digest.Algorithm(200)}},
		{"TLS, no certificate", "TLS", Config{TLS: &tls.Config{}}},
		{"implicit TLS, no certificate", "TLS", Config{TLS: &tls.Config{}, TLSImplicit: true}},
		{"implicit TLS, none", "TLSImplicit", Config{TLSImplicit: true}},
		{"TLS required, none", "TLSRequired", Config{TLSRequired: true}},
		// What only AUTH uses, without Auth (it was ignored).
		{"users without Auth", "AuthUsers", Config{AuthUsers: map[string]string{"u": "p"}}},
		{"mechanisms without Auth", "AuthMechanisms", Config{AuthMechanisms: []string{"PLAIN"}}},
		{"plaintext without Auth", "AuthPlaintext", Config{AuthPlaintext: true}},
		{"auth without TLS", "Auth", Config{Auth: true}},
		{"auth, unknown mechanism", "AuthMechanisms", Config{Auth: true, AuthPlaintext: true, AuthMechanisms: []string{"NTLM"}}},
		{"engine", "Engine", Config{Engine: "threads"}},
		{"bare policy", "Bare", Config{Bare: dot.BareNormalize + 1}},
		{"delay, unknown verb", "Delay", Config{Delay: map[string]time.Duration{"FROB": 1}}},
		{"delay, negative", "Delay", Config{Delay: map[string]time.Duration{"DATA": -1}}},
		{"rule text, CR", "Rules", Config{Rules: []Rule{{Stage: "rcpt", Reply: Reply{Code: 550, Text: "no\r"}}}}},
		{"rule, unknown stage", "Rules", Config{Rules: []Rule{{Stage: "quit", Reply: Reply{Code: 550}}}}},
		{"rule, odds NaN", "Rules", Config{Rules: []Rule{{Stage: "rcpt", Odds: math.NaN(), Reply: Reply{Code: 550}}}}},
		{"rule, odds over 100", "Rules", Config{Rules: []Rule{{Stage: "rcpt", Odds: 101, Reply: Reply{Code: 550}}}}},
		{"force, unknown verb", "Force", Config{Force: map[string]Reply{"FROB": {Code: 500}}}},
		{"force, code 250", "Force", Config{Force: map[string]Reply{"RCPT": {Code: 250}}}},
		{"force, no code, no close", "Force", Config{Force: map[string]Reply{"RCPT": {}}}},
		{"force text, CRLF", "Force", Config{Force: map[string]Reply{"RCPT": {Code: 450, Text: "a\r\n250 ok"}}}},
		{"force text, LF", "Force", Config{Force: map[string]Reply{"CONNECT": {Code: 554, Text: "a\n250 ok"}}}},
	} {
		if c.field != "Addr" {
			c.cfg.Addr = "127.0.0.1:0"
		}
		s, err := Listen(t.Context(), c.cfg)
		if s != nil {
			s.Close()
		}
		var ce *ConfigError
		switch {
		case !errors.Is(err, ErrConfig):
			t.Errorf("%s: Listen: %v, want ErrConfig", c.name, err)
		case !errors.As(err, &ce):
			t.Errorf("%s: Listen: %v (%T), want a *ConfigError", c.name, err, err)
		case ce.Field != c.field:
			t.Errorf("%s: Listen: %v: Field %q, want %q", c.name, err, ce.Field, c.field)
		case !strings.HasPrefix(err.Error(), "smtpsink: bad configuration: "):
			t.Errorf("%s: Listen: %q, want it to start \"smtpsink: bad configuration: \"", c.name, err)
		}
	}
	// The algorithm's error is still there to match.
	if _, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Digest: digest.Algorithm(200)}); !errors.Is(err, digest.ErrUnknownAlgorithm) {
		t.Errorf("Digest 200: %v, want digest.ErrUnknownAlgorithm", err)
	}
	s, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Hostname: "mx.example",
		Force: map[string]Reply{"RCPT": {Code: 450, Text: "4.2.0 try again; tab\tok"}}})
	if err != nil {
		t.Fatalf("a good config: %v", err)
	}
	s.Close()
}

// Of several map entries at fault, the error names the first key in
// sorted order, whatever order the map is ranged in: it named whichever
// the range met first, another one from run to run.
func TestConfigErrorMapOrder(t *testing.T) {
	unknown := map[string]bool{}
	for i := range 20 {
		unknown[fmt.Sprintf("FROB%02d", 19-i)] = true
	}
	first := slices.Sorted(maps.Keys(unknown))[0]
	delays, forces := map[string]time.Duration{}, map[string]Reply{}
	for k := range unknown {
		delays[k], forces[k] = time.Second, Reply{Code: 450}
	}
	badCode := map[string]Reply{}
	negative := map[string]time.Duration{}
	for _, k := range ForceCommands {
		badCode[k], negative[k] = Reply{Code: 250}, -time.Second
	}
	firstCommand := slices.Sorted(slices.Values(ForceCommands))[0]
	for _, c := range []struct {
		name string
		cfg  Config
		want string // the message's end
	}{
		{"Force, unknown commands", Config{Force: forces}, fmt.Sprintf("Force: unknown command %q (one of %s)", first, strings.Join(ForceCommands, " "))},
		{"Delay, unknown commands", Config{Delay: delays}, fmt.Sprintf("Delay: unknown command %q (one of %s)", first, strings.Join(ForceCommands, " "))},
		{"Force, bad codes", Config{Force: badCode}, fmt.Sprintf("Force[%s]: code 250: want 400 to 599, or 0 with Close", firstCommand)},
		{"Delay, negative", Config{Delay: negative}, fmt.Sprintf("Delay[%s]: -1s: negative", firstCommand)},
	} {
		c.cfg.Addr = "127.0.0.1:0"
		s, err := Listen(t.Context(), c.cfg)
		if s != nil {
			s.Close()
		}
		if want := "smtpsink: bad configuration: " + c.want; err == nil || err.Error() != want {
			t.Errorf("%s: Listen: %v, want %q", c.name, err, want)
		}
	}
}
