package smtpsinkcmd

import (
	"io"
	"net/http"
	"net/smtp"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// -metrics serves the sink's counters in Prometheus' text format while it
// runs: two messages taken and a recipient refused by a -rule are counted
// as such, and the replies by code, 2xx and 3xx too; the endpoint goes
// with the sink.
func TestMetrics(t *testing.T) {
	addr, stderr, stop := startErr(t, "-metrics", "127.0.0.1:0", "-rule", "rcpt:^bad@=550 5.1.1 no such user")
	stderr.waitFor("/metrics\n")
	m := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(stderr.String())
	if m == nil {
		stop()
		t.Fatalf("no metrics address in %q", stderr.String())
	}
	send(t, addr, "Subject: 1\r\n\r\none\r\n")
	send(t, addr, "Subject: 2\r\n\r\ntwo\r\n")
	if err := smtp.SendMail(addr, nil, "a@x.test", []string{"bad@y.test"}, []byte("x\r\n")); err == nil {
		t.Error("the -rule's recipient was taken")
	}
	var fams map[string]*dto.MetricFamily
	scrape := func() {
		resp, err := http.Get(m[1])
		if err != nil {
			stop()
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err = p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			stop()
			t.Fatal(err)
		}
	}
	value := func(name, label string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
		for _, mt := range f.Metric {
			var ls []string
			for _, l := range mt.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if strings.Join(ls, ",") == label {
				if mt.Counter != nil {
					return mt.Counter.GetValue(), true
				}
				return mt.Gauge.GetValue(), true
			}
		}
		return 0, false
	}
	const pre = "wirespeed_smtp_sink_"
	// The 2xx and 3xx replies of a session's last steps are counted at
	// its end: scrape once the sessions have ended on the sink's side
	// too (or, if they never do, until a bound, and fail below).
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		scrape()
		if n, _ := value(pre+"sessions_active", ""); n == 0 || time.Now().After(end) {
			break
		}
	}
	for _, c := range []struct {
		name, label string
		want        float64
	}{
		{"sessions_total", "", 3}, {"messages_total", "", 2}, {"recipients_total", "", 2},
		{"bytes_total", "", float64(len("Subject: 1\r\n\r\none\r\n") + len("Subject: 2\r\n\r\ntwo\r\n"))},
		{"tls_handshakes_total", "", 0}, {"error_replies_total", "code=550", 1},
		// three greetings; EHLO, MAIL, RCPT and the data's end of each
		// message, EHLO and MAIL of the refused one; two QUITs
		{"replies_total", "code=220", 3}, {"replies_total", "code=250", 10}, {"replies_total", "code=354", 2},
		{"replies_total", "code=221", 2}, {"replies_total", "code=550", 1},
	} {
		if got, ok := value(pre+c.name, c.label); !ok || got != c.want {
			t.Errorf("%s{%s} = %v (present %v), want %v", c.name, c.label, got, ok, c.want)
		}
	}
	if _, ok := value(pre+"sessions_active", ""); !ok {
		t.Error("no sessions_active gauge")
	}
	if _, _, err := stop(); err != nil {
		t.Error(err)
	}
	if _, err := http.Get(m[1]); err == nil {
		t.Errorf("%s still served after the sink stopped", m[1])
	}
}

// With -d or -D, -metrics has the dumps that failed, as the summary's
// dump_errors: a sink whose messages get 451 for a full disk shows why.
// Without them it has no such family.
func TestMetricsDumpErrors(t *testing.T) {
	scrape := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	metricsURL := func(stderr *syncBuffer) string {
		t.Helper()
		stderr.waitFor("/metrics\n")
		m := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no metrics address in %q", stderr.String())
		}
		return m[1]
	}
	dir := filepath.Join(t.TempDir(), "dumps")
	addr, stderr, stop := startErr(t, "-metrics", "127.0.0.1:0", "-d", dir+"/")
	url := metricsURL(stderr)
	if got := scrape(url); !strings.Contains(got, "\nwirespeed_smtp_sink_dump_errors_total 0\n") {
		t.Errorf("no dump errors at first, metrics:\n%s", got)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sendRefused(t, addr, "x\r\n", 451)
	if got := scrape(url); !strings.Contains(got, "\nwirespeed_smtp_sink_dump_errors_total 1\n") {
		t.Errorf("a dump failed, metrics:\n%s", got)
	}
	stop()

	_, stderr, stop = startErr(t, "-metrics", "127.0.0.1:0")
	if got := scrape(metricsURL(stderr)); strings.Contains(got, "dump_errors") {
		t.Errorf("dump errors without -d or -D:\n%s", got)
	}
	stop()
}
