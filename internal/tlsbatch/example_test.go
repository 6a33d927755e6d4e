package tlsbatch_test

import (
	"crypto/tls"
	"net"

	"github.com/wirespeed/wirespeed/internal/tlsbatch"
)

// A TLS client whose large writes go out three records to a write.
func ExampleConn_Writer() {
	raw, err := net.Dial("tcp", "mx.example.com:465")
	if err != nil {
		return
	}
	defer raw.Close()
	b := &tlsbatch.Conn{Conn: raw}
	tc := tls.Client(b, &tls.Config{ServerName: "mx.example.com"})
	w := b.Writer(tc) // write through w; read tc
	w.Write(make([]byte, 1<<20))
}
