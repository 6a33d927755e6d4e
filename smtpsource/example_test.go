package smtpsource_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/smtpsink"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// Four sessions send 100 pipelined messages of 4 KiB of mail text over
// kept connections (smtp-source -s 4 -m 100 -l 4096 -d, and -pipelining)
// to wirespeed's own sink, and the messages are checked against the MD5
// digests the sink logged. The counts are fixed; the latencies are what
// the machine makes of them.
func ExampleRun() {
	var mu sync.Mutex
	var digests strings.Builder // "<hex md5> <bytes> ..." lines, as a sink's digest log
	sink, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0", Digest: digest.MD5,
		OnMessage: func(m smtpsink.Message) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&digests, "%s %d\n", m.Digest, m.Size)
		}})
	if err != nil {
		log.Fatal(err)
	}
	go sink.Serve()
	defer sink.Close()

	res, err := smtpsource.Run(context.Background(), smtpsource.Config{
		Addr: sink.Addr().String(), Sessions: 4, Messages: 100, Length: 4096, Reuse: true,
		Pipelining: true, Body: "mail", Digests: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("delivered %d on %d connections, errors %d, pipelined %v\n", res.Delivered, res.Connections, res.Errors, res.Pipelining)
	fmt.Printf("replies to the data: %v; message p99 > 0: %v\n", res.Replies["dot"], res.Phases.Message.P99 > 0)
	mu.Lock()
	v, err := smtpsource.Verify(strings.NewReader(digests.String()), res.Digests)
	mu.Unlock()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("verified: %d matched, ok %v\n", v.Matched, v.OK())
	// Output:
	// delivered 100 on 4 connections, errors 0, pipelined true
	// replies to the data: map[250:100]; message p99 > 0: true
	// verified: 100 matched, ok true
}

// A content filter's load as Postfix sees it: each connection says whom
// it speaks for with XCLIENT, each message where it came from with
// XFORWARD, to a server that offers both (wirespeed's sink does, as
// Postfix's smtpd does for the hosts it trusts).
func ExampleConfig_xForward() {
	sink, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	go sink.Serve()
	defer sink.Close()

	res, err := smtpsource.Run(context.Background(), smtpsource.Config{
		Addr: sink.Addr().String(), Messages: 3, Reuse: true, Pipelining: true,
		XClient:  "NAME=client.example ADDR=192.0.2.1",
		XForward: "NAME=relay.example ADDR=192.0.2.2",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("delivered %d; xclient %v, xforward %v, ehlo %v\n", res.Delivered, res.Replies["xclient"], res.Replies["xforward"], res.Replies["ehlo"])
	// Output:
	// delivered 3; xclient map[220:1], xforward map[250:3], ehlo map[250:2]
}

// Check refuses a configuration before anything is opened, with the error
// Run would return.
func ExampleConfig_Check() {
	cfg := smtpsource.Config{Addr: "127.0.0.1:25", QPS: 100, Wait: 10 * time.Millisecond}
	err := cfg.Check()
	fmt.Println(errors.Is(err, smtpsource.ErrConfig), err)
	// Output: true smtpsource: bad configuration: a wait between messages in open loop
}
