//go:build unix

// Command memtrap measures the memory one Reader call takes on input
// shaped to stress it, with this package or net/textproto, in a process
// of its own:
//
//	go run ./textproto/internal/memtrap -shape dotlines -impl wirespeed
//
// It prints the bytes allocated during the call (runtime.MemStats
// TotalAlloc) and the process's maximum resident set size. The input is
// generated as it is read, so it adds only a bufio.Reader's buffer.
//
// Shapes:
//
//	dotlines  ReadDotLines of 32 Mi empty lines, MaxDotBytes 10 MiB and
//	          MaxLineBytes 1000 (net/textproto has no limits)
//	repeat    ReadMIMEHeader of 1 Mi "A: x" fields
//	unique    ReadMIMEHeader of 512 Ki fields with distinct keys
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	stdtp "net/textproto"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"github.com/wirespeed/wirespeed/textproto"
)

// lines yields n lines made by line(i), then tail.
type lines struct {
	n, i int
	line func(i int, b []byte) []byte
	buf  []byte
	tail string
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) && l.i < l.n {
		l.buf = l.line(l.i, l.buf)
		l.i++
	}
	if l.i == l.n && l.tail != "" {
		l.buf = append(l.buf, l.tail...)
		l.tail = ""
	}
	if len(l.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.buf)
	l.buf = l.buf[:copy(l.buf, l.buf[n:])]
	return n, nil
}

func main() {
	shape := flag.String("shape", "dotlines", "dotlines, repeat or unique")
	impl := flag.String("impl", "wirespeed", "wirespeed or stdlib")
	flag.Parse()

	var src io.Reader
	switch *shape {
	case "dotlines":
		src = &lines{n: 32 << 20, line: func(_ int, b []byte) []byte { return append(b, "\r\n"...) }, tail: ".\r\n"}
	case "repeat":
		src = &lines{n: 1 << 20, line: func(_ int, b []byte) []byte { return append(b, "A: x\r\n"...) }, tail: "\r\n"}
	case "unique":
		src = &lines{n: 512 << 10, line: func(i int, b []byte) []byte {
			b = append(b, "K-"...)
			b = strconv.AppendInt(b, int64(i), 10)
			return append(b, ": x\r\n"...)
		}, tail: "\r\n"}
	default:
		fmt.Fprintln(os.Stderr, "memtrap: unknown shape", *shape)
		os.Exit(2)
	}
	br := bufio.NewReader(src)

	var call func() (int, error)
	switch *impl {
	case "wirespeed":
		r := textproto.NewReader(br)
		r.SetLimits(textproto.Limits{MaxDotBytes: 10 << 20, MaxLineBytes: 1000})
		if *shape != "dotlines" {
			r.SetLimits(textproto.Limits{})
		}
		call = func() (int, error) {
			if *shape == "dotlines" {
				l, err := r.ReadDotLines()
				return len(l), err
			}
			h, err := r.ReadMIMEHeader()
			return len(h), err
		}
	case "stdlib":
		r := stdtp.NewReader(br)
		call = func() (int, error) {
			if *shape == "dotlines" {
				l, err := r.ReadDotLines()
				return len(l), err
			}
			h, err := r.ReadMIMEHeader()
			return len(h), err
		}
	default:
		fmt.Fprintln(os.Stderr, "memtrap: unknown impl", *impl)
		os.Exit(2)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := call()
	runtime.ReadMemStats(&after)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("shape=%s impl=%s items=%d err=%v allocated=%.1fMiB maxrss=%.1fMiB\n",
		*shape, *impl, n, err, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(ru.Maxrss)/1024)
	runtime.KeepAlive(call)
}
