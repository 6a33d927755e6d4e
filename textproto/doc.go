// Package textproto reads and writes text-based request/response protocols
// such as SMTP, NNTP, POP3 and the header blocks of HTTP and MIME. It is a
// drop-in replacement for net/textproto of Go 1.26 and Go 1.27: the same
// exported names, fields and method signatures and the same behaviour, plus
// optional limits and faster paths. [MIMEHeader], [Error], [ProtocolError]
// and [Pipeline] are net/textproto's own types, so values pass to and from
// the rest of the standard library unchanged.
//
// # Compatibility
//
// Given the same input through the same kind of bufio.Reader, every Reader
// method returns what net/textproto's returns, byte for byte and error for
// error, and consumes exactly as much of the bufio.Reader. This holds for
// every buffer size, for input that arrives a byte at a time or fails
// midway, and for unusual input: bare CR or LF, NUL, lines longer than the
// buffer, malformed headers, unterminated input. Differential tests and
// fuzzing against net/textproto check it. The one exception, where
// net/textproto loses data, follows.
//
// # Deviation: lines cut off at a buffer boundary
//
// When a line fills the bufio.Reader's buffer exactly (once or more) and the
// next Read returns no data but an error (io.EOF at the end of an
// unterminated last line, or any read error), net/textproto drops the line
// and returns only the error. This package returns the line, and the error
// when it next reads: in the next call, or later in the same call for the
// methods that read on (ReadMIMEHeader, ReadDotLines, ReadResponse). If the
// error was transient, the input after it starts a new line, as in
// net/textproto. Every method that reads lines keeps the line: ReadLine and
// ReadLineBytes return it; ReadContinuedLine and ReadContinuedLineBytes
// include it (net/textproto drops a lost continuation line but keeps the
// space it added for it, or from Go 1.26.9 and 1.27.2 fails the call);
// ReadCodeLine and ReadResponse parse it; ReadDotLines returns it before
// the error; ReadMIMEHeader returns its field, or the ProtocolError for an
// indented first line.
//
// Results differ nowhere else. Only R's unread state can: after
// net/textproto fails with "message too large" on an indented first header
// line longer than 80 bytes, a CR at the end of the buffer makes
// R.UnreadByte behave differently.
//
// # Limits
//
// A Reader accepts lines and headers of any size, as net/textproto does,
// until [Reader.SetLimits] bounds them (see [Limits]). A limit error comes
// as soon as the excess has been seen, so a Reader with limits holds at most
// about the limit plus its bufio.Reader's buffer, even on an endless line.
// The next call first discards, without buffering, the rest of the over-long
// line (and after a failed ReadMIMEHeader the rest of the header block), so
// the caller can answer ("500 line too long") and read on in step with the
// peer. Discarding reads as much as the peer sends: bound it with a deadline
// on the connection. If it fails with a read error, the call returns that
// error and the next call resumes it. ReadDotLines and dot readers read a
// block that breaks a limit to its end line before they fail, and BDAT
// chunks are read to their end. Limits.MaxDiscardBytes (or
// DotOptions.MaxDiscardBytes) bounds what a dot reader discards after a
// problem with a block's data: past it the reader gives up with an error
// matching [ErrNotInStep] and the data error, the Reader fails every later
// call with it, and the server should close the connection. BDAT chunks
// need no such bound: the client declares each one's size.
//
// # Errors in message data
//
// Message data (a dot block, or the chunks of a BDAT message) that breaks
// a limit or a rule of its framing is read to its end before the error is
// reported, so the server can answer and read the next command. The error
// matches every kind of problem found with errors.Is: [dot.ErrTooLarge],
// [dot.ErrLineTooLong], and a [*dot.SyntaxError] for a bare LF and one for
// a bare CR, in that order of precedence, which its text follows. A server
// should answer by the first that matches: too large takes precedence over
// problems with the content, as in go-smtp and chasquid, so a message too
// large gets 552 whatever else is wrong with it.
//
// # Dot encoding
//
// [Reader.DotReader], [Reader.ReadDotBytes] and [Writer.DotWriter] decode
// and encode exactly as net/textproto does (package dot's Compat mode,
// quirks included): the same data and errors, the same Read results for
// every buffer size, the same consumption of R, and the same bytes written
// and flushed to W, even when W fails. As in net/textproto, every block gets
// its own dot reader or writer; one used after the next call on its Reader
// or Writer goes on in its own state (a drained reader returns io.EOF) and
// never reads the next block. Another Reader call reads the rest of an
// unfinished block first, and a DotWriter closed twice writes its end line
// twice (Strict and Raw dot writers refuse that; see below).
//
// The work is done a buffered window at a time by package dot's kernels, not
// a byte at a time. Dot readers implement [io.WriterTo] and dot writers
// [io.ReaderFrom], so io.Copy in either direction goes through one pooled
// buffer and allocates nothing per window.
//
// [Reader.DotReaderMode] and [Writer.DotWriterMode] offer package dot's
// other framings. dot.Strict follows RFC 5321: only "\r\n.\r\n" ends the
// data and a bare CR or LF fails the block with a *dot.SyntaxError, so SMTP
// smuggling sequences ("\n.\n", "\r.\r\n", ...) never end a message early.
// dot.Raw frames the same way and keeps the "\r\n" line endings in the data.
// These errors, and dot.ErrTooLarge for a block over Limits.MaxDotBytes,
// come after the block has been read to its end line, so the caller can
// reply and go on. A Strict or Raw dot writer refuses a bare CR or LF with a
// *dot.SyntaxError, and its Close then returns the error without writing the
// end line: a message cut short must not be delivered, so drop the
// connection. The Writer keeps that error (or a write error of such a dot
// writer) and returns it from every later call that would write, so
// nothing, not even a command, goes into the unfinished data. Strict and
// Raw dot writers also refuse to write, or to write the end line again,
// once closed, with an error matching dot.ErrClosed.
//
// [Reader.DotReaderWith] takes a block's mode, bare CR/LF policy
// ([dot.BarePolicy]) and limits, in place of the Reader's [Limits], and
// its [*DotReader] tells the decoded size so far.
//
// # BDAT
//
// [Reader.Chunks] reads a message sent in BDAT chunks (RFC 3030 CHUNKING,
// with BINARYMIME) under the same limits and line rules as dot blocks,
// counted over the whole message: the server reads each BDAT command and
// hands its size to [Chunks.Next]. The data is not dot-encoded; a chunk
// implements [io.WriterTo], which writes straight out of R's buffer.
// [Writer.WriteChunk] and [Writer.ChunkWriter] send chunks.
//
// # Memory
//
// ReadLine copies a line that lies whole in R's buffer once, into its
// string; longer lines are assembled in a buffer that is kept for lines up
// to 64 KiB. ReadMIMEHeader copies the values of a header into strings of
// up to 8 KiB (a value over 2 KiB gets one of its own), allocates each
// distinct key once (common keys not at all), puts all values in one
// []string, cut into exact, full-capacity slices, and makes the map at its
// final size; net/textproto allocates for most keys and values and grows
// the map and the value slices as it goes. So a Reader reused for one
// header after another never allocates more than net/textproto for the
// same header; its first header also allocates the scratch buffers it
// keeps (under 1 KiB for a small header, at most 64 KiB). Keeping one of the
// values keeps the up to 8 KiB of text it was copied with; copy it with
// strings.Clone to keep it alone.
package textproto
