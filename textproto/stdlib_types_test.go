package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/mail"
	stdtp "net/textproto"
	"strings"
	"testing"
)

// MIMEHeader, Error, ProtocolError and Pipeline are net/textproto's types:
// what our Reader returns goes unchanged into the standard library's APIs,
// and error checks written against net/textproto match our errors.

// TestHeaderToMultipart passes a header read by our Reader to
// mime/multipart, which takes a net/textproto.MIMEHeader, and reads the
// part back.
func TestHeaderToMultipart(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader(
		"content-disposition: form-data; name=\"field\"\r\ncontent-type: text/plain\r\n\r\n")))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(pw, "hello")
	mw.Close()

	p, err := multipart.NewReader(&body, mw.Boundary()).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	var back MIMEHeader = p.Header
	data, _ := io.ReadAll(p)
	if p.FormName() != "field" || back.Get("Content-Type") != "text/plain" || string(data) != "hello" {
		t.Errorf("part %q, header %q, data %q", p.FormName(), back, data)
	}
	fh := multipart.FileHeader{Filename: "f.txt", Header: h}
	if fh.Header.Get("Content-Disposition") != `form-data; name="field"` {
		t.Errorf("FileHeader.Header = %q", fh.Header)
	}
}

// TestHeaderToMail reads a message header with our Reader and parses its
// fields with net/mail.
func TestHeaderToMail(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader(
		"From: Ann <ann@example.com>\r\nDate: Mon, 23 Jun 2025 10:00:00 +0000\r\n\r\n")))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	mh := mail.Header(h)
	from, err := mh.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Address != "ann@example.com" {
		t.Errorf("From: %v, %v", from, err)
	}
	if d, err := mh.Date(); err != nil || d.Year() != 2025 {
		t.Errorf("Date: %v, %v", d, err)
	}
}

// TestErrorsAsStdlib checks errors our Reader returns against
// net/textproto's types.
func TestErrorsAsStdlib(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("550 no such user\r\nbad\r\n \tindented: x\r\n\r\n")))
	_, _, err := r.ReadCodeLine(250)
	var e *stdtp.Error
	if !errors.As(err, &e) || e.Code != 550 || e.Msg != "no such user" {
		t.Errorf("ReadCodeLine: %v; errors.As(*net/textproto.Error) gives %v", err, e)
	}
	_, _, err = r.ReadResponse(250)
	var pe stdtp.ProtocolError
	if !errors.As(err, &pe) || !strings.HasPrefix(string(pe), "short response") {
		t.Errorf("ReadResponse: %v; errors.As(net/textproto.ProtocolError) gives %q", err, pe)
	}
	_, err = r.ReadMIMEHeader()
	pe = ""
	if !errors.As(err, &pe) || !strings.HasPrefix(string(pe), "malformed MIME header initial line") {
		t.Errorf("ReadMIMEHeader: %v; errors.As(net/textproto.ProtocolError) gives %q", err, pe)
	}
}

// TestConnPipeline uses a Conn's Pipeline as a net/textproto.Pipeline.
func TestConnPipeline(t *testing.T) {
	c := NewConn(struct {
		io.Reader
		io.Writer
		io.Closer
	}{strings.NewReader(""), io.Discard, io.NopCloser(nil)})
	var p *stdtp.Pipeline = &c.Pipeline
	id, err := c.Cmd("NOOP")
	if err != nil || id != 0 {
		t.Fatalf("Cmd: %d, %v", id, err)
	}
	if next := p.Next(); next != 1 {
		t.Errorf("Next after one Cmd = %d, want 1", next)
	}
}
