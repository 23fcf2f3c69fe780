// Package adapter runs a product's adapter, products/<name>/adapter
// (docs/design.md#the-adapter-interface), for the tools that drive a
// running product (cmd/ladder, cmd/gcjitter): one method per lifecycle
// entry point they use (version, fresh, pools), what the adapter
// prints on stdout as lines, its stderr passed through, exit 3 (scenario
// N/A) as ErrNA. What a scenario measures is not asked here: the product's
// registry entry answers it in-process (product.Product.Answer).
package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
)

// ErrNA is an adapter's exit 3: the scenario is N/A for its product. The
// error wrapping it says the adapter's reason (the last line of its stderr).
var ErrNA = errors.New("N/A")

// ExitNA is the adapter's exit code for a scenario N/A.
const ExitNA = 3

// Adapter is one product's adapter executable.
type Adapter struct {
	Path       string    // the executable, products/<name>/adapter
	Stderr     io.Writer // its stderr (and pools' stdout); nil: discarded
	DriverCPUs string    // pools runs on these CPUs (placement.Pinned); "": not pinned
	// Interrupt tells a running entry point to stop when the context ends
	// (cli.Command); nil: cli.ForwardInterrupt.
	Interrupt func(*os.Process) error
}

// Name is the adapter's name, its product's.
func (a Adapter) Name() string { return filepath.Base(a.Path) }

// Error is an entry point that failed: its exit code.
type Error struct {
	What string // "refop pools userinfo"
	Code int    // its exit code; -1 when it did not exit (a signal)
}

func (e *Error) Error() string { return fmt.Sprintf("%s failed (exit %d)", e.What, e.Code) }

// Version is the product version.
func (a Adapter) Version(ctx context.Context) (string, error) {
	return a.line(ctx, "version")
}

// Fresh lets the product start again empty before a load step (a no-op for most).
func (a Adapter) Fresh(ctx context.Context, state, scenario string) error {
	_, err := a.lines(ctx, nil, "fresh", state, scenario)
	return err
}

// Pools mints n credentials of a scenario into out, on the driver CPUs;
// what it prints goes to Stderr.
func (a Adapter) Pools(ctx context.Context, state, scenario string, n int, out string) error {
	_, err := a.lines(ctx, placement.Pinned(a.DriverCPUs), "pools", state, scenario, strconv.Itoa(n), out)
	return err
}

// line is the output of an entry point that prints one line ("" for none).
func (a Adapter) line(ctx context.Context, args ...string) (string, error) {
	out, err := a.lines(ctx, nil, args...)
	return strings.Join(out, "\n"), err
}

// lines runs the entry point args (prefixed by pin) and returns its
// stdout's lines, also when it fails. Pools' stdout is not data: it goes
// to Stderr.
func (a Adapter) lines(ctx context.Context, pin []string, args ...string) ([]string, error) {
	argv := append(append(pin, a.Path), args...)
	cmd := cli.Command(ctx, a.Interrupt, argv...)
	var stdout, stderr bytes.Buffer
	errOut := io.Writer(&stderr)
	if a.Stderr != nil {
		errOut = io.MultiWriter(a.Stderr, &stderr)
	}
	cmd.Stdout, cmd.Stderr = &stdout, errOut
	if args[0] == "pools" {
		cmd.Stdout = errOut
	}
	err := cmd.Run()
	var lines []string
	if s := strings.TrimRight(stdout.String(), "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return lines, nil
	case errors.As(err, &ee) && ee.ExitCode() == ExitNA:
		return lines, fmt.Errorf("%s %s: %w: %s", a.Name(), what(args), ErrNA, lastLine(stderr.String()))
	case errors.As(err, &ee):
		return lines, &Error{What: a.Name() + " " + what(args), Code: ee.ExitCode()}
	}
	return lines, fmt.Errorf("running %s %s: %w", a.Path, args[0], err)
}

// what names an entry point by its command and scenario (not the state directory).
func what(args []string) string {
	if len(args) >= 3 {
		return args[0] + " " + args[2]
	}
	return args[0]
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
