package smtpsink

import (
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Rule gives the reply to a command (or event) of its Stage whose
// argument matches, in place of the sink's own: a failure for a given
// address, client or stage, with odds. Rules are tried in the order of
// Config.Rules, and the first that matches and wins its odds decides.
type Rule struct {
	Stage Stage
	// Match is tried on the stage's argument (see Stage); nil matches
	// every argument.
	Match *regexp.Regexp
	// Odds is the percentage of its matches the rule applies to, drawn
	// at each match; 0 means always.
	Odds float64
	// Reply is the reply: a code from 400 to 599. 421 closes the
	// connection (RFC 5321 §3.8), as does Reply.Close.
	Reply Reply
}

// A Stage is where a Rule applies, and what its Match is tried on.
type Stage string

const (
	StageConnect Stage = "connect" // the greeting: the client's IP address; a refused session serves QUIT only
	StageHelo    Stage = "helo"    // HELO, EHLO, LHLO: the host name given
	StageMail    Stage = "mail"    // MAIL: the sender's address, without brackets
	StageRcpt    Stage = "rcpt"    // RCPT: the recipient's address
	StageData    Stage = "data"    // DATA (before 354): each recipient's address; one match refuses
	StageBDAT    Stage = "bdat"    // BDAT: its arguments ("4096 LAST"); the chunk is read and thrown away
	// StageDot is the reply to a message's data (after DATA's end or the
	// LAST chunk), tried on each recipient's address: in SMTP the first
	// recipient that matches decides the one reply; in LMTP each
	// recipient gets the reply of the first rule that matches it, or 250,
	// up to a 421, after which the rest get none (the connection closes).
	StageDot Stage = "dot"
)

var stages = []Stage{StageConnect, StageHelo, StageMail, StageRcpt, StageData, StageBDAT, StageDot}

// ruleSyntax is -rule's: STAGE:REGEXP[@ODDS%]=CODE[ TEXT]. The REGEXP is
// the shortest that leaves a well-formed rest, so it may hold '=' and '@'.
var ruleSyntax = regexp.MustCompile(`^([a-z]+):(.*?)(?:@([0-9]+(?:\.[0-9]*)?)%)?=([0-9]{3})(?: (.*))?$`)

// oddsLike is a REGEXP that ends as if in ODDS, but not in a number that
// ruleSyntax takes: '@', what a mistyped number has (or nothing), '%'.
var oddsLike = regexp.MustCompile(`@[-+0-9.eE ]*%$`)

// ParseRule parses a rule as smtp-sink's -rule takes it:
// STAGE:REGEXP[@ODDS%]=CODE TEXT, for example
// "rcpt:^bounce@=550 5.1.1 no such user" or
// "mail:^flaky@@50%=451 4.3.0 try later". An empty REGEXP matches
// everything; TEXT may be left out. ODDS is more than 0 and at most 100
// (without it, the rule applies to every match); a REGEXP that ends in
// '@', then digits, signs, points, e or blanks that are not such a
// number, then '%' is refused as mistyped odds (a pattern that means it
// escapes the '%').
func ParseRule(s string) (Rule, error) {
	m := ruleSyntax.FindStringSubmatch(s)
	if m == nil {
		return Rule{}, fmt.Errorf("smtpsink: rule %q: want STAGE:REGEXP[@ODDS%%]=CODE TEXT", s)
	}
	r := Rule{Stage: Stage(m[1])}
	if m[3] == "" && oddsLike.MatchString(m[2]) {
		// @-1%, @50 %, @1e2%: a mistyped ODDS, not a pattern's end.
		return Rule{}, fmt.Errorf("smtpsink: rule %q: odds %s: want @N%% with N more than 0 and at most 100 (a pattern that ends so: write \\%%)", s, m[2][strings.LastIndex(m[2], "@"):])
	}
	if m[2] != "" {
		re, err := regexp.Compile(m[2])
		if err != nil {
			return Rule{}, fmt.Errorf("smtpsink: rule %q: %w", s, err)
		}
		r.Match = re
	}
	if m[3] != "" {
		r.Odds, _ = strconv.ParseFloat(m[3], 64) // the syntax is a number's
		if r.Odds == 0 {
			// Rule.Odds 0 is every match, the opposite of what @0% says.
			return Rule{}, fmt.Errorf("smtpsink: rule %q: odds %s%%: want more than 0 (leave out @ODDS%% for every match)", s, m[3])
		}
	}
	r.Reply.Code, _ = strconv.Atoi(m[4])
	r.Reply.Text = m[5]
	if err := r.check(); err != nil {
		return Rule{}, fmt.Errorf("smtpsink: rule %q: %w", s, err)
	}
	return r, nil
}

// check reports what is wrong with the rule.
func (r Rule) check() error {
	if !slices.Contains(stages, r.Stage) {
		return fmt.Errorf("unknown stage %q (connect, helo, mail, rcpt, data, bdat or dot)", r.Stage)
	}
	if r.Reply.Code < 400 || r.Reply.Code > 599 {
		return fmt.Errorf("code %d: want 400 to 599", r.Reply.Code)
	}
	if !(r.Odds >= 0 && r.Odds <= 100) { // NaN too
		return fmt.Errorf("odds %v%%: want 0 to 100", r.Odds)
	}
	if !oneLine(r.Reply.Text) {
		return fmt.Errorf("text %q: not one line", r.Reply.Text)
	}
	return nil
}

// rules are a Server's Config.Rules by stage.
type rules map[Stage][]Rule

func newRules(cfg *Config) rules {
	if len(cfg.Rules) == 0 {
		return nil
	}
	rs := rules{}
	for _, r := range cfg.Rules {
		if r.Reply.Code == 421 {
			r.Reply.Close = true
		}
		rs[r.Stage] = append(rs[r.Stage], r)
	}
	return rs
}

// rule returns the reply of the first rule of stage that matches arg and
// wins its odds.
func (ss *session) rule(stage Stage, arg string) (Reply, bool) {
	for _, r := range ss.s.rules[stage] {
		if r.Match != nil && !r.Match.MatchString(arg) {
			continue
		}
		if r.Odds > 0 && r.Odds < 100 && ss.s.percent() >= r.Odds {
			continue
		}
		return r.Reply, true
	}
	return Reply{}, false
}

// ruleAny returns the reply of the first rule of stage (in order) that
// matches one of the transaction's recipients.
func (ss *session) ruleAny(stage Stage) (Reply, bool) {
	if len(ss.s.rules[stage]) == 0 {
		return Reply{}, false
	}
	for _, to := range ss.to {
		if r, ok := ss.rule(stage, to); ok {
			return r, true
		}
	}
	return Reply{}, false
}

// percent draws a number in [0, 100) for a rule's odds.
func (s *Server) percent() float64 {
	if s.h.percent != nil {
		return s.h.percent()
	}
	return 100 * rand.Float64()
}

// clientIP is what a connect rule matches: the client's IP address.
func clientIP(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
