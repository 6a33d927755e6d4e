package gosmtpsource

import (
	"context"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/wirespeed/wirespeed/smtpsource"
)

// LMTP with BDAT and pipelining, a chunk refused for its size: go-smtp
// answers it with 552, ends the transaction and refuses the later chunks
// once each, LAST included; the source stays in step (issue 19's case
// against wirespeed's sink, here against go-smtp): every message fails on
// the session's one connection, and go-smtp sees no error.
func TestLMTPRefusedChunkAgainstGoSMTP(t *testing.T) {
	addr, rec := startGoSMTPWith(t, func(rec *received, srv *smtp.Server) {
		srv.LMTP = true
		srv.MaxMessageBytes = 1000
	})
	res, err := smtpsource.Run(context.Background(), smtpsource.Config{Addr: addr, LMTP: true, Chunking: true, Pipelining: true,
		ChunkSize: 1024, Length: 3000, Recipients: 3, Reuse: true, Messages: 3,
		NoSize: true}) // SIZE= would have the MAIL refused before any chunk
	if err != nil {
		t.Fatal(err)
	}
	if res.Started != 3 || res.Failed != 3 || res.Connections != 1 || res.IOErrors+res.ProtocolErrors != 0 || res.Replies["rset"][250] != 3 || res.Replies["bdat"][552] != 3 {
		t.Errorf("%+v", res)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) > 0 || rec.n != 0 {
		t.Errorf("go-smtp: %d messages, %q", rec.n, rec.errs)
	}
}

// go-smtp departs from RFC 2033 §4.2 when a message sent with BDAT in
// LMTP turns out too large at its LAST chunk: it answers once (552), not
// once per recipient. The source, expecting three replies, cannot tell a
// reply that never comes from one that is slow: each message costs
// Timeout, an I/O error and a new connection, and every message is
// still accounted for (failed). If go-smtp answers per recipient some
// day, this test fails and says so.
func TestLMTPOversizedLastAgainstGoSMTP(t *testing.T) {
	// Each message waits out Timeout: a second, so that the exchanges
	// before the missing replies fit in it with a wide margin; the test
	// runs beside the others.
	t.Parallel()
	addr, rec := startGoSMTPWith(t, func(rec *received, srv *smtp.Server) {
		srv.LMTP = true
		srv.MaxMessageBytes = 3000 // the first chunk of 2048 bytes fits, LAST does not
	})
	res, err := smtpsource.Run(context.Background(), smtpsource.Config{Addr: addr, LMTP: true, Chunking: true, Pipelining: true,
		ChunkSize: 2048, Length: 3000, Recipients: 3, Reuse: true, Messages: 3, Timeout: time.Second,
		NoSize: true}) // SIZE= would have the MAIL refused before any chunk
	if err != nil {
		t.Fatal(err)
	}
	if res.Started != 3 || res.Failed != 3 || res.Replies["dot"][552] != 3 || res.IOErrors != 3 || res.Connections != 3 {
		t.Errorf("%+v", res)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.n != 0 {
		t.Errorf("go-smtp took %d messages", rec.n)
	}
}
