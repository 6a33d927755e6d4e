package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/netio"
)

// ModulePath is the path of the wirespeed module, whose checkout holds the
// comparison module in CompareDir.
const ModulePath = "github.com/wirespeed/wirespeed"

// CompareDir is the directory of the comparison module (module
// github.com/wirespeed/wirespeed/internal/serve/compare) in the wirespeed
// module's tree. A module of its own is not in the wirespeed module's
// zip, so it is there only in a checkout.
const CompareDir = "internal/serve/compare"

// ErrNoCompare is wrapped by the error of BuildCompare where there is no
// checkout to build the comparison engines from.
var ErrNoCompare = errors.New("the gnet, evio and netpoll engines are built from a wirespeed checkout (its " + CompareDir + " module)")

// BuildCompare builds the comparison module's binary, wirespeed-compare,
// into dir with `go build` and the given build flags, and returns its
// path. The module is found in the checkout of the wirespeed module that
// the go command sees from the working directory (the main module there,
// or the one it replaces it with).
func BuildCompare(ctx context.Context, dir string, buildFlags ...string) (string, error) {
	var stderr bytes.Buffer
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", ModulePath)
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		// With no go command there is no stderr to quote.
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return "", fmt.Errorf("%w: go list -m %s: %w", ErrNoCompare, ModulePath, err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), filepath.FromSlash(CompareDir))
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCompare, err)
	}
	exe := filepath.Join(dir, "wirespeed-compare")
	args := append(append([]string{"build"}, buildFlags...), "-o", exe, ".")
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the comparison engines in %s: %v\n%s", src, err, out)
	}
	return exe, nil
}

// Args returns the flags that select cfg, for `wirespeed serve` and the
// comparison module's binary alike.
func Args(cfg Config) []string {
	args := []string{"-engine", cfg.Engine, "-mode", cfg.Mode, "-addr", cfg.Addr}
	if cfg.Delay != 0 {
		args = append(args, "-delay", cfg.Delay.String())
	}
	if cfg.IdleTimeout != 0 {
		args = append(args, "-idle-timeout", timeoutArg(cfg.IdleTimeout, netio.DefaultIdleTimeout))
	}
	if cfg.WriteTimeout != 0 {
		args = append(args, "-write-timeout", timeoutArg(cfg.WriteTimeout, netio.DefaultWriteTimeout))
	}
	return args
}

// runCompare serves cfg with the comparison module's binary exe (built
// from the checkout when exe is ""), until ctx is done: then the binary
// gets SIGTERM, which stops it as ctx stops Serve.
func runCompare(ctx context.Context, cfg Config, exe string, stdout, stderr io.Writer) error {
	if err := check(cfg, map[string]Engine{cfg.Engine: nil}); err != nil {
		return err
	}
	if exe == "" {
		dir, err := os.MkdirTemp("", "wirespeed-compare")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if exe, err = BuildCompare(ctx, dir); err != nil {
			return fmt.Errorf("%w; or pass -compare-exe", err)
		}
	}
	cmd := exec.Command(exe, Args(cfg)...)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = stdout, stderr, childAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitStatus(err)
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return exitStatus(err)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return errors.New("the comparison engine did not stop on SIGTERM")
	}
}

// exitStatus turns the comparison binary's exit status into serve's own
// (a usage mistake stays 2): the binary has said why, on stderr.
func exitStatus(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return cli.StatusError{Status: ee.ExitCode()}
	}
	return err
}
