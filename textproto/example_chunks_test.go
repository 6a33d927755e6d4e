package textproto_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// readBDAT parses "BDAT <size> [LAST]".
func readBDAT(cmd string) (size int64, last bool) {
	f := strings.Fields(cmd)
	size, _ = strconv.ParseInt(f[1], 10, 64)
	return size, len(f) == 3 && strings.EqualFold(f[2], "LAST")
}

func ExampleReader_Chunks() {
	// An SMTP server with CHUNKING reads a message of two chunks, with a
	// 1 MiB limit for the whole message.
	conn := strings.NewReader("BDAT 6\r\nHello,BDAT 8 LAST\r\n world\r\nQUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	msg := r.Chunks(textproto.ChunkOptions{MaxBytes: 1 << 20, MaxLineBytes: 998})
	var body strings.Builder
	for {
		cmd, _ := r.ReadLine()
		size, last := readBDAT(cmd)
		if _, err := io.Copy(&body, msg.Next(size, last)); err != nil {
			fmt.Println("554", err)
		} else {
			fmt.Println("250 chunk of", size, "bytes")
		}
		if last {
			break
		}
	}
	cmd, _ := r.ReadLine()
	fmt.Printf("%q %s\n", body.String(), cmd)
	// Output:
	// 250 chunk of 6 bytes
	// 250 chunk of 8 bytes
	// "Hello, world\r\n" QUIT
}

func ExampleChunks_Next() {
	// A chunk that breaks a rule is still read to its end: the next
	// command reads correctly.
	conn := strings.NewReader("BDAT 9 LAST\r\nbare\nLF\r\nQUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	msg := r.Chunks(textproto.ChunkOptions{}) // dot.BareReject
	cmd, _ := r.ReadLine()
	size, last := readBDAT(cmd)
	_, err := io.Copy(io.Discard, msg.Next(size, last))
	fmt.Println(err)
	cmd, _ = r.ReadLine()
	fmt.Println(cmd)
	// Output:
	// dot: bare LF at offset 4
	// QUIT
}

func ExampleChunks_Size() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("abcdefgh")))
	msg := r.Chunks(textproto.ChunkOptions{Binary: true})
	io.Copy(io.Discard, msg.Next(3, false))
	io.Copy(io.Discard, msg.Next(5, true))
	fmt.Println(msg.Size())
	// Output:
	// 8
}

func ExampleChunks_Err() {
	// The size limit counts all chunks; too large takes precedence over
	// the other problems.
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("1234\r\n" + "5678\n")))
	msg := r.Chunks(textproto.ChunkOptions{MaxBytes: 8})
	io.Copy(io.Discard, msg.Next(6, false))
	fmt.Println(msg.Err())
	io.Copy(io.Discard, msg.Next(5, true))
	err := msg.Err()
	fmt.Println(errors.Is(err, dot.ErrTooLarge), errors.Is(err, dot.ErrBareLF))
	if errors.Is(err, dot.ErrTooLarge) {
		fmt.Println("552 message too large")
	}
	// Output:
	// <nil>
	// true true
	// 552 message too large
}

func ExampleChunk_Read() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("a\nb\r\n")))
	msg := r.Chunks(textproto.ChunkOptions{Bare: dot.BareNormalize})
	b := make([]byte, 16)
	n, err := msg.Next(5, true).Read(b)
	fmt.Printf("%q %v\n", b[:n], err)
	// Output:
	// "a\r\nb\r\n" EOF
}

func ExampleChunk_WriteTo() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("Hi\r\n")))
	var sb strings.Builder
	n, err := r.Chunks(textproto.ChunkOptions{}).Next(4, true).WriteTo(&sb)
	fmt.Printf("%q %d %v\n", sb.String(), n, err)
	// Output:
	// "Hi\r\n" 4 <nil>
}

func ExampleWriter_WriteChunk() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	w.WriteChunk([]byte("Subject: hi\r\n\r\n"), false)
	w.WriteChunk([]byte("body\r\n"), true)
	fmt.Printf("%q\n", conn.String())
	// Output:
	// "BDAT 15\r\nSubject: hi\r\n\r\nBDAT 6 LAST\r\nbody\r\n"
}

func ExampleWriter_ChunkWriter() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	cw := w.ChunkWriter(8)
	io.WriteString(cw, "Subject: hi\r\n\r\nbody\r\n")
	cw.Close()
	fmt.Printf("%q\n", conn.String())
	// Output:
	// "BDAT 8\r\nSubject:BDAT 8\r\n hi\r\n\r\nbBDAT 5 LAST\r\nody\r\n"
}

func ExampleChunkWriter_Chunks() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	cw := w.ChunkWriter(4 << 10)
	io.Copy(cw, strings.NewReader(strings.Repeat("x", 10<<10)))
	cw.Close()
	fmt.Println(cw.Chunks(), "replies to read")
	// Output:
	// 3 replies to read
}

func ExampleChunkWriter_Write() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	cw := w.ChunkWriter(4)
	n, err := cw.Write([]byte("abcdef")) // sends one chunk, keeps "ef"
	fmt.Println(n, err, cw.Chunks())
	cw.Close()
	fmt.Println(cw.Chunks())
	// Output:
	// 6 <nil> 1
	// 2
}

func ExampleChunkWriter_Close() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	cw := w.ChunkWriter(100)
	cw.Close() // an empty message: "BDAT 0 LAST"
	fmt.Printf("%q\n", conn.String())
	// Output:
	// "BDAT 0 LAST\r\n"
}
