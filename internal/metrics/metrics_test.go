package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The handler writes each family with its help, type and values, read
// anew at each request; Serve serves it at /metrics until its context
// ends.
func TestHandlerAndServe(t *testing.T) {
	n := 0.0
	collect := func() []Metric {
		n++
		return []Metric{
			One("t_total", "A counter.", false, n),
			One("t_open", "A gauge.", true, 2),
			{Name: "t_replies_total", Help: "By code.", Labels: []string{"code"}, Values: []Value{{[]string{"250"}, 7}, {[]string{"550"}, 1}}},
		}
	}
	get := func(url string) string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	srv := httptest.NewServer(Handler(collect))
	defer srv.Close()
	get(srv.URL)
	body := get(srv.URL)
	for _, want := range []string{
		"# HELP t_total A counter.\n# TYPE t_total counter\nt_total 2\n",
		"# HELP t_open A gauge.\n# TYPE t_open gauge\nt_open 2\n",
		"# TYPE t_replies_total counter\nt_replies_total{code=\"250\"} 7\nt_replies_total{code=\"550\"} 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}

	s, err := Serve("127.0.0.1:0", collect)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + s.Addr().String() + "/metrics"
	if body := get(url); !strings.Contains(body, "t_total 3\n") {
		t.Errorf("Serve: %s", body)
	}
	s.Close()
	if _, err := http.Get(url); err == nil {
		t.Error("still served after Close")
	}
	if _, err := Serve("127.0.0.1:x", collect); err == nil {
		t.Error("a bad address served")
	}
}
