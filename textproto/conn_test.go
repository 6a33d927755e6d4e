package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	stdtp "net/textproto"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// TestConnPipe talks to a net/textproto server over net.Pipe.
func TestConnPipe(t *testing.T) {
	cc, sc := net.Pipe()
	c := NewConn(cc)
	srv := stdtp.NewConn(sc)
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			if err := srv.PrintfLine("220 ready"); err != nil {
				return err
			}
			line, err := srv.ReadLine()
			if err != nil {
				return err
			}
			if line != "HELO client.example" {
				return fmt.Errorf("server read %q", line)
			}
			if err := srv.PrintfLine("250-hello %s", "client.example"); err != nil {
				return err
			}
			if err := srv.PrintfLine("250 ok"); err != nil {
				return err
			}
			if line, err = srv.ReadLine(); err != nil || line != "QUIT" {
				return fmt.Errorf("server read %q, %v", line, err)
			}
			return srv.Close()
		}()
	}()
	if code, msg, err := c.ReadCodeLine(220); code != 220 || msg != "ready" || err != nil {
		t.Fatalf("greeting: %d %q %v", code, msg, err)
	}
	id, err := c.Cmd("HELO %s", "client.example")
	if err != nil || id != 0 {
		t.Fatalf("Cmd: %d, %v", id, err)
	}
	c.StartResponse(id)
	code, msg, err := c.ReadResponse(250)
	c.EndResponse(id)
	if code != 250 || msg != "hello client.example\nok" || err != nil {
		t.Fatalf("response: %d %q %v", code, msg, err)
	}
	if id, err := c.Cmd("QUIT"); err != nil || id != 1 {
		t.Fatalf("QUIT: %d, %v", id, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadLine(); err == nil {
		t.Error("ReadLine after the server closed: no error")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.Cmd("NOOP"); err == nil {
		t.Error("Cmd on a closed connection: no error")
	}
}

// TestDial dials a local listener, and a port that refuses connections.
func TestDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("200 hi\r\n"))
		c.Close()
	}()
	c, err := Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if code, msg, err := c.ReadCodeLine(2); code != 200 || msg != "hi" || err != nil {
		t.Errorf("ReadCodeLine: %d %q %v", code, msg, err)
	}
	c.Close()
	ln.Close()
	c, err = Dial("tcp", tooltest.RefusingAddr(t))
	var opErr *net.OpError
	if c != nil || !errors.As(err, &opErr) {
		t.Errorf("Dial to a refusing port: %v, %v", c, err)
	}
}

// TestPrintfLine compares the bytes and errors of PrintfLine with
// net/textproto's.
func TestPrintfLine(t *testing.T) {
	cases := []struct {
		format string
		args   []any
	}{
		{"foo %d", []any{123}},
		{"", nil},
		{"%s", []any{"a\r\nb"}},
		{"%d %q", []any{1}},
		{strings.Repeat("x", 5000), nil},
	}
	for _, c := range cases {
		var a, b bytes.Buffer
		errA := NewWriter(bufio.NewWriter(&a)).PrintfLine(c.format, c.args...)
		errB := stdtp.NewWriter(bufio.NewWriter(&b)).PrintfLine(c.format, c.args...)
		if a.String() != b.String() || errA != errB {
			t.Errorf("PrintfLine(%q): %q, %v; net/textproto %q, %v", c.format, a.String(), errA, b.String(), errB)
		}
	}
	// A failing writer: the error of the flush.
	for _, size := range []int{16, 4096} {
		errA := NewWriter(bufio.NewWriterSize(brokenWriter{}, size)).PrintfLine("%s", strings.Repeat("y", 100))
		errB := stdtp.NewWriter(bufio.NewWriterSize(brokenWriter{}, size)).PrintfLine("%s", strings.Repeat("y", 100))
		if errA != errB || errA != errInjected {
			t.Errorf("size %d: %v, net/textproto %v", size, errA, errB)
		}
	}
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errInjected }
