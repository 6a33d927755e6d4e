package tcpperf_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// The same run over TLS, against crypto/tls's echo server: Config.TLS
// alone selects the netio engine; the handshakes (the certificate checked
// for Addr's host, 127.0.0.1) come before the schedule.
func ExampleConfig_tls() {
	cert, err := selfsigned.Server("127.0.0.1")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()

	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	res, err := tcpperf.Run(context.Background(), tcpperf.Config{
		Addr: ln.Addr().String(), QPS: 100, Duration: 100 * time.Millisecond, DrainTimeout: time.Minute,
		TLS: &tls.Config{RootCAs: roots},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("engine %s, TLS %v: sent %d, received %d, errors %d\n", res.Engine, res.TLS, res.Sent, res.Received, res.Errors)
	// Output: engine netio, TLS true: sent 10, received 10, errors 0
}
