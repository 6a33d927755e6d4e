// Package textproto reads and writes text-based request/response protocols
// such as SMTP, NNTP, POP3 and the header blocks of HTTP and MIME. It is a
// drop-in replacement for the standard library's net/textproto (as of Go
// 1.26): the same exported names, types, fields and method signatures, and
// the same behaviour, plus optional limits and faster paths.
//
// # Compatibility
//
// Given the same input through the same kind of bufio.Reader, every Reader
// method returns what net/textproto's returns, byte for byte, including
// the error values (a [ProtocolError] with the same text, an [*Error] with
// the same code and message, the same read errors), and leaves the
// bufio.Reader having consumed exactly as much input. This holds for every
// bufio size, for inputs delivered a byte at a time or failing mid-stream,
// and for unusual input: bare CR, bare LF, NUL, lines longer than the
// buffer, malformed header lines, empty or unterminated input. Differential
// tests and a fuzz target (FuzzReader) check it against net/textproto.
//
// The only differences are the deviations listed below, where
// net/textproto loses data.
//
// # Deviations from net/textproto
//
// Lines cut off at a buffer boundary. When a line fills the bufio.Reader's
// buffer exactly (once or more) and the next Read returns no data but an
// error (io.EOF at the end of an unterminated last line, or any read
// error), net/textproto drops the line and returns only the error. This
// package returns the line, and the error when it next reads: from the
// next call on the Reader, or later in the same call for the methods that
// read on (ReadMIMEHeader, ReadDotLines, ReadResponse). If the error was
// transient and more input follows, that input starts a new line, as it
// does in net/textproto when an error interrupts a line. It applies to every method that reads lines: ReadLine and
// ReadLineBytes return the line; ReadContinuedLine and
// ReadContinuedLineBytes include it (net/textproto drops a lost
// continuation line silently, keeping the space it appended for it);
// ReadCodeLine and ReadResponse parse it; ReadDotLines returns it before
// its error; ReadMIMEHeader returns its field (or the ProtocolError for an
// indented first line). TestDeviation* prove each case.
//
// A note on R's state, not a difference in results: after net/textproto
// stops with "message too large" on an indented first header line longer
// than 80 bytes, a CR at the end of the buffer makes R.UnreadByte behave
// differently. No other call leaves R's unread state different.
//
// # Limits
//
// A Reader from [NewReader] accepts lines and headers of any size, as
// net/textproto does. [Reader.SetLimits] bounds them (see [Limits]): a
// line longer than MaxLineBytes fails with an error matching
// [ErrLineTooLong], and a MIME header with more than MaxHeaderBytes of
// fields or more than MaxHeaderFields fields fails with an error matching
// [ErrHeaderTooLarge]. The error comes as soon as the excess has been seen,
// so a Reader with limits holds at most about the limit plus its
// bufio.Reader's buffer, whatever the peer sends; an endless line without a
// newline keeps memory flat.
//
// The input that broke a limit is skipped: the next call on the Reader
// first discards, without buffering, the rest of the over-long line, and
// after a failed ReadMIMEHeader the rest of that header block up to and
// including its empty line. The caller can answer ("500 line too long",
// "552 header too large", "431 Request Header Fields Too Large") and read
// on in step with the peer. Discarding reads as much input as the peer
// sends; bound it with a deadline on the connection. If discarding fails
// with a read error, the call returns that error and the next call
// resumes. Reading R directly instead of through the Reader sees the
// undiscarded rest.
//
// MaxDotBytes bounds the decoded size of dot-encoded blocks. ReadDotLines
// reads a block that breaks MaxDotBytes or MaxLineBytes to its end line
// anyway, keeping only the lines before the excess, and then fails with an
// error matching dot.ErrTooLarge or ErrLineTooLong: it too stays in step.
// For DotReader, see below.
//
// # Dot encoding
//
// [Reader.DotReader], [Reader.ReadDotBytes] and [Writer.DotWriter] decode
// and encode exactly as net/textproto does (package dot's Compat mode,
// quirks included): the same data, the same errors, the same Read results
// for every buffer size, and the same consumption of R; the DotWriter
// writes the same bytes to W and flushes it at the same points, so even
// a failing W gives the same results. Closing a DotReader early by calling
// another Reader method reads the rest of the block, as net/textproto
// does; a DotWriter closed twice writes its end line twice, as
// net/textproto's does.
//
// The difference is speed: instead of a byte at a time through ReadByte
// and WriteByte, whole buffered windows go through package dot's kernels
// (SIMD where the CPU has it; see dot.Kernel). The reader returned by
// DotReader also implements [io.WriterTo] and the writer returned by
// DotWriter [io.ReaderFrom], so io.Copy in either direction decodes or
// encodes whole windows through one pooled buffer and does not allocate.
// As in net/textproto, every block gets a new dot reader or writer, and
// one used after the next call on its Reader or Writer goes on in its own
// state: a drained reader returns io.EOF, it never reads the next block.
//
// [Reader.DotReaderMode] and [Writer.DotWriterMode] give access to the
// other framings of package dot. dot.Strict follows RFC 5321: only
// "\r\n.\r\n" ends the data, and a bare CR or LF fails the block with a
// *dot.SyntaxError naming its offset, so the SMTP smuggling sequences
// ("\n.\n", "\r.\r\n", ...) never end a message early. dot.Raw frames
// the same way and keeps "\r\n" line endings in the decoded data. With
// Limits.MaxDotBytes, a larger block fails with dot.ErrTooLarge. These data
// errors come after the block has been read to its end line (the data
// returned stops at the problem), so the caller can reply and go on. In
// Strict and Raw mode the DotWriter refuses a bare CR or LF in its input
// with a *dot.SyntaxError; its Close then returns that error and writes no
// end line, because a message cut short must not be delivered: drop the
// connection.
//
// # Speed and memory
//
// ReadLine returns a line that lies whole in R's buffer with one copy (the
// string), and assembles longer lines in a buffer that grows by doubling
// and is reused for lines up to 64 KiB. ReadMIMEHeader allocates once for
// the text of all keys and values of a header, once for the value slices,
// and once for the map (plus a little for keys that occur more than once),
// where net/textproto allocates for every value and most keys. As a
// consequence, keeping any one key or value of a header keeps the text of
// the whole header (a few KiB at most, usually) in memory; clone a string
// with strings.Clone to keep it alone.
package textproto
