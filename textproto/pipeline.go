package textproto

import nettextproto "net/textproto"

// A Pipeline orders the requests and responses of a connection that several
// goroutines share; the zero Pipeline is ready to use. It is
// net/textproto's own type: see there for its methods.
type Pipeline = nettextproto.Pipeline
