// Command wirespeed runs the wirespeed benchmarks and tools.
//
//	wirespeed bench [flags] [suite...]   compare wirespeed with the standard library
//	wirespeed bench net [flags]          compare the serve engines under tcpperf load
//	wirespeed bench smtp [flags]         wirespeed's and Postfix's smtp-sink and smtp-source
//	wirespeed bench tlspipe [flags]      the smtp pair's bytes with no SMTP, plain or over TLS
//	wirespeed sum [OPTION]... [FILE]...  md5sum/sha*sum, in parallel
//	wirespeed serve [flags]              echo or line server on one engine
//	wirespeed smtp-sink [flags]          SMTP/LMTP server that accepts and discards mail
//	wirespeed smtp-source [flags] ADDR   SMTP/LMTP load client
//	wirespeed tcpperf [flags]            TCP latency load generator
//	wirespeed tcpperf merge FILE...      merge tcpperf interval logs of several hosts
//	wirespeed help                       list the commands
//
// Each command is a package under internal/; this one only dispatches.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/smtpsinkcmd"
	"github.com/wirespeed/wirespeed/internal/smtpsourcecmd"
	"github.com/wirespeed/wirespeed/internal/sumcmd"
	"github.com/wirespeed/wirespeed/internal/tcpperfcmd"
)

// A command is one subcommand of wirespeed.
type command struct {
	name    string
	summary string
	// interrupt: SIGINT and SIGTERM cancel the context instead of ending
	// the process, so that the command can stop cleanly (servers, load
	// runs). Other commands die on them, as md5sum does.
	interrupt bool
	run       func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands returns the subcommands, in the order help lists them.
func commands() []command {
	return []command{
		{name: "bench", summary: bench.Summary, run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return bench.Run(ctx, args, stdout, stderr)
		}},
		{name: "serve", summary: serve.Summary, interrupt: true, run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return serve.Run(ctx, args, stdout, stderr)
		}},
		{name: "smtp-sink", summary: smtpsinkcmd.Summary, interrupt: true, run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return smtpsinkcmd.Run(ctx, args, stdout, stderr)
		}},
		{name: "smtp-source", summary: smtpsourcecmd.Summary, interrupt: true, run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return smtpsourcecmd.Run(ctx, args, stdout, stderr)
		}},
		{name: "sum", summary: sumcmd.Summary, run: sumcmd.Run},
		{name: "tcpperf", summary: tcpperfcmd.Summary, interrupt: true, run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return tcpperfcmd.Run(ctx, args, stdout, stderr)
		}},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args to a command and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		ctx := context.Background()
		if c.interrupt {
			var stop context.CancelFunc
			ctx, stop = signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		status, print := cli.Status(err)
		if print {
			// Errors that already name the command ("tcpperf: ...",
			// "bench net: ...") are not prefixed with it again.
			if msg := err.Error(); strings.HasPrefix(msg, c.name+":") || strings.HasPrefix(msg, c.name+" ") {
				fmt.Fprintf(stderr, "wirespeed %s\n", msg)
			} else {
				fmt.Fprintf(stderr, "wirespeed %s: %s\n", c.name, msg)
			}
		}
		return status
	}
	fmt.Fprintf(stderr, "wirespeed: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wirespeed <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
}
