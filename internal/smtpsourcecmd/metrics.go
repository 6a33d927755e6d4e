package smtpsourcecmd

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/wirespeed/wirespeed/internal/metrics"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// sourceMetrics returns the -metrics families of a run watched through
// live: its counters under wirespeed_smtp_source_.
func sourceMetrics(live *smtpsource.Live) func() []metrics.Metric {
	return func() []metrics.Metric {
		c := live.Counts()
		const p = "wirespeed_smtp_source_"
		ms := []metrics.Metric{
			metrics.One(p+"connections_open", "SMTP sessions (connections) open now.", true, float64(c.Open)),
			metrics.One(p+"connections_total", "SMTP sessions (connections) opened.", false, float64(c.Connections)),
			metrics.One(p+"messages_started_total", "Messages begun.", false, float64(c.Started)),
			metrics.One(p+"messages_delivered_total", "Messages the server accepted.", false, float64(c.Delivered)),
			metrics.One(p+"messages_failed_total", "Messages begun and not accepted.", false, float64(c.Failed)),
			metrics.One(p+"recipients_accepted_total", "Recipients the server accepted.", false, float64(c.RcptOK)),
			metrics.One(p+"bytes_total", "Message data bytes of the delivered messages, as the server keeps them.", false, float64(c.Bytes)),
			metrics.One(p+"tls_handshakes_total", "TLS handshakes that succeeded.", false, float64(c.TLSHandshakes)),
			metrics.One(p+"connect_retries_total", "Failed connects tried again.", false, float64(c.ConnectRetries)),
			{Name: p + "errors_total", Help: "Errors by kind: connect (failed dials), connect_refusal (greetings refused), io, protocol, rejection (4xx and 5xx replies).",
				Labels: []string{"kind"}, Values: []metrics.Value{
					{Labels: []string{"connect"}, V: float64(c.ConnectErrors)},
					{Labels: []string{"connect_refusal"}, V: float64(c.ConnectRefusals)},
					{Labels: []string{"io"}, V: float64(c.IOErrors)},
					{Labels: []string{"protocol"}, V: float64(c.ProtocolErrors)},
					{Labels: []string{"rejection"}, V: float64(c.Rejections)},
				}},
		}
		replies := metrics.Metric{Name: p + "replies_total", Help: "Replies by phase (banner, ehlo, mail, rcpt, data, dot, ...) and code.", Labels: []string{"phase", "code"}}
		for _, phase := range slices.Sorted(maps.Keys(c.Replies)) {
			codes := c.Replies[phase]
			for _, code := range slices.SortedFunc(maps.Keys(codes), cmp.Compare) {
				replies.Values = append(replies.Values, metrics.Value{Labels: []string{phase, strconv.Itoa(code)}, V: float64(codes[code])})
			}
		}
		return append(ms, replies)
	}
}
