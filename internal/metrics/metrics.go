// Package metrics serves a tool's counters over HTTP in Prometheus' text
// exposition format (at /metrics), with Prometheus' client library. It is
// for the commands (internal/smtpsourcecmd, internal/smtpsinkcmd) only, so
// that programs importing the library packages (smtpsource, smtpsink) do
// not build the client library in: those packages expose plain counters,
// and the commands turn them into Metrics here.
package metrics

import (
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A Metric is one metric family: a counter or gauge with its values, one
// per set of label values.
type Metric struct {
	Name, Help string
	Gauge      bool     // a gauge; otherwise a counter
	Labels     []string // the label names, if any
	Values     []Value
}

// A Value is one of a Metric's values, for Labels' values in order.
type Value struct {
	Labels []string
	V      float64
}

// One returns a Metric with one value and no labels.
func One(name, help string, gauge bool, v float64) Metric {
	return Metric{Name: name, Help: help, Gauge: gauge, Values: []Value{{V: v}}}
}

// collector gets the metrics from its function at each scrape. It
// describes none beforehand (an unchecked collector): the label values,
// reply codes and the like, are known only as they come.
type collector func() []Metric

func (c collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c() {
		d := prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
		t := prometheus.CounterValue
		if m.Gauge {
			t = prometheus.GaugeValue
		}
		for _, v := range m.Values {
			pm, err := prometheus.NewConstMetric(d, t, v.V, v.Labels...)
			if err != nil {
				pm = prometheus.NewInvalidMetric(d, err)
			}
			ch <- pm
		}
	}
}

// Handler serves the metrics collect returns, read anew at each request,
// in the exposition format the scraper asks for (text by default).
func Handler(collect func() []Metric) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector(collect))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// A Server serves metrics at /metrics until closed.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Serve listens on addr (port 0 picks one) and serves Handler(collect) at
// /metrics until Close.
func Serve(addr string, collect func() []Metric) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(collect))
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln) // it returns when closed
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close closes the listener and the connections: when it returns, no
// request is served any more.
func (s *Server) Close() error { return s.srv.Close() }
