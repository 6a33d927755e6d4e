// Package textproto reads and writes text-based request/response protocols
// such as SMTP, NNTP, POP3 and the header blocks of HTTP and MIME. It is a
// drop-in replacement for net/textproto of Go 1.26 and 1.27 (change the
// import path), which decodes and encodes dot blocks a buffered window at a
// time instead of a byte at a time, and adds what servers need: limits,
// RFC 5321 framing and BDAT. The example of [Reader.DotReaderWith] named
// dataHandler is a server's DATA handler.
//
// Guarantees:
//   - Given the same input through the same kind of bufio.Reader, every
//     method returns what net/textproto's returns, byte for byte and error
//     for error, and consumes as much, for every buffer size and for
//     malformed or cut-off input. [MIMEHeader], [Error], [ProtocolError]
//     and [Pipeline] are net/textproto's own types.
//   - The one exception: a line that fills the bufio.Reader's buffer
//     exactly and is followed by a read error is returned, and the error
//     after it (by the same call, in a method that reads on past a line);
//     net/textproto drops the line, and in such a method reads on past
//     the error if the source does.
//   - With [Reader.SetLimits], a Reader holds about the limit plus its
//     buffer at most, whatever the input, and after a limit error reads on
//     in step with the peer.
//   - Message data (a dot block, or BDAT chunks) that breaks a limit or
//     its framing is read to its end before the error, which matches every
//     problem found with errors.Is, [dot.ErrTooLarge] first, and, if a
//     read error cut the data short after a problem, that error last.
//   - [dot.Strict] and [dot.Raw] dot readers ([Reader.DotReaderWith],
//     [Reader.DotReaderMode]) end a block only at "\r\n.\r\n", so SMTP
//     smuggling cannot end a message early. A Strict or Raw dot writer that
//     fails mid-message fails every later write of its [Writer].
//   - Dot readers are [io.WriterTo]s and dot writers [io.ReaderFrom]s, and
//     io.Copy through them allocates nothing per window; a reused Reader
//     never allocates more than net/textproto for the same header.
//
// [Reader.Chunks] reads a BDAT message (RFC 3030) and [Writer.ChunkWriter]
// writes one. The repository's docs/textproto.md tells the rules in full:
// limits and discarding, error precedence, the cut-off line, memory.
package textproto
