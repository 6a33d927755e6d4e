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
//	wirespeed help                       list the commands (also -h, -help, --help)
//	wirespeed help CMD [SUB]             CMD's usage, as wirespeed CMD [SUB] -help
//
// Each command is a package under internal/; this one only dispatches.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

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
	// runs) and stop the child processes it started (bench), which would
	// outlive it. Other commands die on them, as md5sum does.
	interrupt bool
	// help is the argument that asks the command for its usage: "-help"
	// (the default), or "--help" for sum's GNU options.
	help string
	// subs are the words after its name that make it another command
	// (`tcpperf merge`), for `wirespeed help CMD SUB`.
	subs []string
	run  func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands returns the subcommands, in the order help lists them.
func commands() []command {
	return []command{
		{name: "bench", summary: bench.Summary, interrupt: true, subs: bench.Subcommands(), run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
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
		{name: "sum", summary: sumcmd.Summary, help: "--help", run: sumcmd.Run},
		{name: "tcpperf", summary: tcpperfcmd.Summary, interrupt: true, subs: tcpperfcmd.Subcommands(), run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return tcpperfcmd.Run(ctx, args, stdout, stderr)
		}},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// isHelp reports whether arg asks wirespeed for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "-help" || arg == "--help"
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run dispatches args to a command and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if isHelp(args[0]) {
		if len(args) == 1 || len(args) == 2 && isHelp(args[1]) {
			if err := usage(stdout); err != nil {
				fmt.Fprintf(stderr, "wirespeed: write error: %v\n", err)
				return 1
			}
			return 0
		}
		return help(args[1], args[2:], stdin, stdout, stderr)
	}
	c, ok := lookup(args[0])
	if !ok {
		return unknown(args[0], stderr)
	}
	ctx := context.Background()
	if c.interrupt {
		var stop context.CancelFunc
		ctx, stop = interruptible(ctx, signalGrace)
		// After a signal the signals stay caught up to the exit (or
		// the grace): a duplicate still on its way would otherwise end
		// the process by their default action, with another status
		// than the one returned.
		defer func() {
			if ctx.Err() == nil {
				stop()
			}
		}()
	}
	return exit(c, c.run(ctx, args[1:], stdin, stdout, stderr), stderr)
}

// interruptible returns ctx cancelled by the first SIGINT or SIGTERM;
// the signals are let go grace later, so that the next one ends the
// process as it would any other command's (a stop that hangs is not
// waited for). Those within grace are taken for the first's duplicates:
// timeout(1) sends its signal to the command and then to its process
// group, the command included.
func interruptible(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	context.AfterFunc(ctx, func() { time.AfterFunc(grace, stop) })
	return ctx, stop
}

// signalGrace is interruptible's grace: far longer than a signal takes to
// be sent twice, far shorter than a person takes to send it again.
const signalGrace = 200 * time.Millisecond

// help prints the usage of the command named name on stdout, as `wirespeed
// CMD -help` does, and returns the exit status: 0.
func help(name string, sub []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, ok := lookup(name)
	if !ok {
		return unknown(name, stderr)
	}
	if len(sub) > 1 || len(sub) == 1 && !slices.Contains(c.subs, sub[0]) {
		fmt.Fprintf(stderr, "wirespeed: help %s %s: %s has no subcommand %q (wirespeed help CMD [SUB])\n", name, strings.Join(sub, " "), name, strings.Join(sub, " "))
		return 2
	}
	h := cmp.Or(c.help, "-help") // -h is smtp-sink's -h HOSTNAME
	err := c.run(context.Background(), append(sub, h), stdin, stdout, stderr)
	return exit(c, err, stderr)
}

// exit prints the error a command c returned, once, and returns its exit
// status.
func exit(c command, err error, stderr io.Writer) int {
	status, print := cli.Status(err)
	if print {
		// Errors that already name the command ("tcpperf: ...",
		// "bench net: ...") are not prefixed with it again; those that
		// name its package ("smtpsource: ...") are named by the command.
		msg := err.Error()
		if pkg := strings.ReplaceAll(c.name, "-", ""); pkg != c.name {
			msg = strings.TrimPrefix(msg, pkg+": ")
		}
		if strings.HasPrefix(msg, c.name+":") || strings.HasPrefix(msg, c.name+" ") {
			fmt.Fprintf(stderr, "wirespeed %s\n", msg)
		} else {
			fmt.Fprintf(stderr, "wirespeed %s: %s\n", c.name, msg)
		}
	}
	return status
}

func unknown(name string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "wirespeed: unknown command %q\n", name)
	usage(stderr)
	return 2
}

// usage prints wirespeed's usage to out and returns the error of the
// first write that failed.
func usage(out io.Writer) error {
	w := &cli.Writer{W: out}
	fmt.Fprintln(w, "usage: wirespeed <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nwirespeed help CMD (or wirespeed CMD -help) prints a command's usage.")
	return w.Err
}
