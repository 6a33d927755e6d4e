package smtpsourcecmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// scrape gets url and parses it as Prometheus' text format: the value of
// each sample by name and labels, as `name{a="x",b="y"}` (labels by name).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			key := name
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			if ls != nil {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				got[key] = m.Counter.GetValue()
			case dto.MetricType_GAUGE:
				got[key] = m.Gauge.GetValue()
			default:
				t.Errorf("%s: type %v", name, f.GetType())
			}
		}
	}
	return got
}

var metricsURL = regexp.MustCompile(`metrics on (http://\S+/metrics)`)

// -metrics serves the run's counters while it goes: scraped while
// package smtpsink holds the first message's data unanswered (its Decide
// waits), they show one connection open, one message started and none
// delivered, and the replies so far by phase and code.
func TestMetrics(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0", Decide: func(m smtpsink.Message) smtpsink.Reply {
		once.Do(func() { close(held); <-release })
		return smtpsink.Reply{Code: 250}
	}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })

	var stderr tooltest.Buffer
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), []string{"-m", "3", "-d", "-q", "-metrics", "127.0.0.1:0", srv.Addr().String()}, &out, &stderr)
	}()
	<-held
	m := metricsURL.FindStringSubmatch(stderr.String())
	if m == nil {
		close(release)
		t.Fatalf("no metrics address in %q", stderr.String())
	}
	got := scrape(t, m[1])
	close(release)
	const p = "wirespeed_smtp_source_"
	for k, v := range map[string]float64{
		p + "connections_open": 1, p + "connections_total": 1, p + "messages_started_total": 1, p + "messages_delivered_total": 0,
		p + "bytes_total": 0, p + "tls_handshakes_total": 0, p + `errors_total{kind="io"}`: 0,
		p + `replies_total{code="220",phase="banner"}`: 1, p + `replies_total{code="250",phase="ehlo"}`: 1,
		p + `replies_total{code="250",phase="mail"}`: 1, p + `replies_total{code="250",phase="rcpt"}`: 1, p + `replies_total{code="354",phase="data"}`: 1,
	} {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if _, ok := got[p+`replies_total{code="250",phase="dot"}`]; ok {
		t.Errorf("a reply to the data before it was sent: %v", got)
	}
	if err := <-done; err != nil || !strings.Contains(out.String(), "delivered 3 of 3") {
		t.Errorf("%v\n%s", err, out.String())
	}
	if _, err := http.Get(m[1]); err == nil {
		t.Errorf("%s still served after the run", m[1])
	}
	var o, e bytes.Buffer
	if err := Run(context.Background(), []string{"-metrics", "256.0.0.1:x", "-q", "127.0.0.1:1"}, &o, &e); err == nil || !strings.Contains(err.Error(), "-metrics") {
		t.Errorf("bad -metrics address: %v", err)
	}
}

// A -metrics address smtp-source cannot listen on is named, with the
// rule of smtp-sink's -metrics and serve's -addr (cli.ListenError): a
// usage error where no run could listen there (a host that does not
// exist: it said "-metrics: listen tcp: lookup HOST: no such host",
// exit 1; an address not this host's), exit 1 where the environment
// must change (a port in use). Nothing is dialled: the server's
// address is one nothing listens on, and the run never begins.
func TestMetricsListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	b := busy.Addr().String()
	type tc struct {
		addr, want string
		status     int
	}
	cases := []tc{
		{"no such host.invalid:0", `-metrics "no such host.invalid:0": lookup `, 2},
		{b, fmt.Sprintf("-metrics %q: bind: address already in use", b), 1},
	}
	if ln, err := net.Listen("tcp", "192.0.2.1:0"); err == nil {
		ln.Close()
		t.Log("192.0.2.1 is this host's: not tried")
	} else {
		cases = append(cases, tc{"192.0.2.1:9102", `-metrics "192.0.2.1:9102": bind: cannot assign requested address`, 2})
	}
	for _, c := range cases {
		// Not a ctx done already: it would cancel the lookup.
		err := Run(t.Context(), []string{"-q", "-metrics", c.addr, "127.0.0.1:1"}, io.Discard, io.Discard)
		want := "smtp-source: " + c.want
		if status, _ := cli.Status(err); status != c.status || !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("-metrics %q: %v (status %d), want %q in front, exit status %d", c.addr, err, status, want, c.status)
		}
	}
}
