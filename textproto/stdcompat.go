package textproto

import (
	"bufio"
	nettextproto "net/textproto"
	"strings"
)

// continuedLineFails reports whether the linked net/textproto fails
// ReadContinuedLine (and so ReadMIMEHeader) with the read error that cuts
// off a continuation line, as Go 1.26.9, 1.27.2 and later do, instead of
// returning the line read so far and leaving the error to the next call.
// It is found out by asking net/textproto, since the change came in point
// releases that build tags cannot tell apart.
var continuedLineFails = func() bool {
	r := nettextproto.NewReader(bufio.NewReader(strings.NewReader("a\r\n ")))
	_, err := r.ReadContinuedLine()
	return err != nil
}()
