package smtpsinkcmd

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/metrics"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// serveMetrics serves s's counters at http://addr/metrics (-metrics), if
// addr is set, saying where on stderr; stop ends it. dumps, if not nil,
// adds the dumps that failed (-d, -D).
func serveMetrics(addr string, s *smtpsink.Server, dumps *dumper, stderr io.Writer) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ms, err := metrics.Serve(addr, sinkMetrics(s, dumps))
	if err != nil {
		return nil, fmt.Errorf("smtp-sink: %w", cli.ListenError("-metrics", addr, err))
	}
	fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ms.Addr())
	return func() { ms.Close() }, nil
}

// sinkMetrics returns the -metrics families of s: its Stats under
// wirespeed_smtp_sink_, and with dumps (-d, -D) the dumps that failed,
// as the summary's dump_errors.
func sinkMetrics(s *smtpsink.Server, dumps *dumper) func() []metrics.Metric {
	return func() []metrics.Metric {
		st := s.Stats()
		const p = "wirespeed_smtp_sink_"
		errs := metrics.Metric{Name: p + "error_replies_total", Help: "4xx and 5xx replies written, by code, counted even if the connection failed before they left (but the 421s of the sink's own shutdown).", Labels: []string{"code"}}
		for _, code := range slices.SortedFunc(maps.Keys(st.Errors), cmp.Compare) {
			errs.Values = append(errs.Values, metrics.Value{Labels: []string{strconv.Itoa(code)}, V: float64(st.Errors[code])})
		}
		replies := metrics.Metric{Name: p + "replies_total", Help: "Replies written, by code, counted even if the connection failed before they left (2xx and 3xx counted at each message's end and each session's end; not the 421s of the sink's own shutdown).", Labels: []string{"code"}}
		all := maps.Clone(st.Positive)
		maps.Copy(all, st.Errors)
		for _, code := range slices.SortedFunc(maps.Keys(all), cmp.Compare) {
			replies.Values = append(replies.Values, metrics.Value{Labels: []string{strconv.Itoa(code)}, V: float64(all[code])})
		}
		ms := []metrics.Metric{
			metrics.One(p+"sessions_total", "Connections accepted (sessions).", false, float64(st.Sessions)),
			metrics.One(p+"sessions_active", "Sessions open now.", true, float64(st.Active)),
			metrics.One(p+"sessions_aborted_total", "Sessions that ended without QUIT.", false, float64(st.Aborted)),
			metrics.One(p+"connections_refused_total", "Connections over -m answered with 421 (-m-refuse).", false, float64(st.Refused)),
			metrics.One(p+"tls_handshakes_total", "TLS handshakes completed.", false, float64(st.TLS)),
			metrics.One(p+"messages_total", "Messages accepted.", false, float64(st.Messages)),
			metrics.One(p+"messages_unsent_total", "Messages accepted whose 250 could not be sent.", false, float64(st.Unsent)),
			metrics.One(p+"recipients_total", "Recipients of the messages accepted.", false, float64(st.Recipients)),
			metrics.One(p+"bytes_total", "Data bytes of the messages accepted.", false, float64(st.Bytes)),
			errs,
			replies,
		}
		if dumps != nil {
			ms = append(ms, metrics.One(p+"dump_errors_total", "Transactions -d or -D could not dump (their messages refused with 451).", false, float64(dumps.errs.Load())))
		}
		return ms
	}
}
