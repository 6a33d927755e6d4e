// Command wirespeed-compare serves the echo and line services of `wirespeed
// serve` on the engines it is compared with: gnet, evio and
// cloudwego/netpoll. It is a module of its own so that the wirespeed
// module requires none of them; `wirespeed serve` and `wirespeed bench net`
// build it from the checkout and run it for those engines. Its flags are
// serve's:
//
//	wirespeed-compare -engine gnet|evio|netpoll -mode echo|line -addr HOST:PORT
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/serve"
)

// ErrFatal is wrapped by the error of an engine that failed while serving
// (gnet reports such failures through its logger's Fatalf, which here stops
// the engine instead of the process).
var ErrFatal = errors.New("serve: engine failed")

// engines returns the comparison engines; gnetHook, if not nil, gets the
// logger handed to gnet (for tests).
func engines(gnetHook func(*gnetLogger)) map[string]serve.Engine {
	return map[string]serve.Engine{
		"gnet": func(cfg serve.Config, fail func(error)) (string, func() error, error) {
			return startGnet(cfg, fail, gnetHook)
		},
		"evio": func(cfg serve.Config, _ func(error)) (string, func() error, error) {
			return startEvio(cfg)
		},
		"netpoll": func(cfg serve.Config, _ func(error)) (string, func() error, error) {
			return startNetpoll(cfg)
		},
	}
}

// listenAddr is addr, serve's -addr (HOST:PORT), resolved to IP:PORT for
// gnet and evio, which take it in a URL they parse their own way: a
// host that net takes could be refused there (gnet: a space, as in
// "no such host.invalid", which no resolver asks a server about) or
// misread ('?' begins evio's options), and a host that does not exist is
// then net's DNSError, which serve names -addr for.
func listenAddr(addr string) (string, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return "", err
	}
	return ta.String(), nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := serve.RunEngines(ctx, "wirespeed-compare", os.Args[1:], engines(nil), os.Stdout, os.Stderr)
	stop()
	status, print := cli.Status(err)
	if print {
		fmt.Fprintf(os.Stderr, "wirespeed-compare: %v\n", err)
	}
	os.Exit(status)
}
