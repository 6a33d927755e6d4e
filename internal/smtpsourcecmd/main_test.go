package smtpsourcecmd

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
)

// TestMain runs the command instead of the tests when
// SMTPSOURCECMD_MAIN=1, so that a test binary (go test -c) can stand in
// for `wirespeed smtp-source` where cmd/wirespeed does not dispatch to it
// yet: SMTPSOURCECMD_MAIN=1 ./smtpsourcecmd.test -s 10 -m 5000 host:port.
func TestMain(m *testing.M) {
	if os.Getenv("SMTPSOURCECMD_MAIN") != "1" {
		os.Exit(m.Run())
	}
	err := Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	status, print := cli.Status(err)
	if print {
		fmt.Fprintln(os.Stderr, "wirespeed smtp-source:", err)
	}
	os.Exit(status)
}
