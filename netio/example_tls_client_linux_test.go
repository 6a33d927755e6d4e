package netio_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/netio"
)

// A TLS client on event loops: OnOpen of the dialed connection starts
// TLS (as the client, for the host of Dial's address), OnHandshake sends
// the first message, sealed, and the Handler gets the reply in
// plaintext. The server here is crypto/tls's.
func ExampleLoops_Dial_tls() {
	cert, err := selfsigned.Server("localhost")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() { // a line server: "hello" gets "hi"
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if line, _ := bufio.NewReader(c).ReadString('\n'); line == "hello\n" {
			c.Write([]byte("hi\n"))
		}
	}()

	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	cliCfg := &tls.Config{RootCAs: pool} // ServerName: Dial's "localhost"
	done := make(chan struct{})
	s, err := netio.NewLoops(func(c *netio.LoopConn, in []byte) int {
		fmt.Printf("reply %q\n", in)
		c.Close() // after close_notify
		close(done)
		return len(in)
	}, &netio.LoopOptions{
		OnOpen: func(c *netio.LoopConn) { c.StartTLS(cliCfg) },
		OnHandshake: func(c *netio.LoopConn, err error) {
			if err != nil {
				log.Print(err) // the connection is closed
				return
			}
			st, _ := c.ConnectionState()
			fmt.Printf("verified %s\n", st.VerifiedChains[0][0].DNSNames[0])
			c.WriteString("hello\n")
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if _, err := s.Dial(context.Background(), "tcp", net.JoinHostPort("localhost", port)); err != nil {
		log.Fatal(err)
	}
	<-done
	// Output:
	// verified localhost
	// reply "hi\n"
}
