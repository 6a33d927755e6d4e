// Command wirespeed runs the wirespeed benchmarks and tools.
//
//	wirespeed bench [flags]      compare wirespeed with the standard library
//	wirespeed help               list the subcommands
//
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand of wirespeed.
type command struct {
	name    string
	summary string
	// run executes the subcommand with the arguments after its name and
	// returns the process exit status.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds c to the subcommand table; it is called from init functions.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("wirespeed: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "wirespeed: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wirespeed <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
