package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

const usageHead = `Usage: podstep --step-file FILE -- LOADSTEP [ARGS...]

Runs LOADSTEP --output=FILE ARGS... (LOADSTEP is the path of loadstep) with
its stdout and stderr passed on to podstep's stdout, in its own process
group. Once it has exited, podstep prints the step record in FILE
("idpbench.step/v1") as one line of compact JSON -- the same members and
values, white space removed -- and exits with loadstep's exit code. That line
is the last thing podstep writes: loadstep's own lines (its summary, its
warnings) all come before it, through the same stream.

When loadstep exits without leaving a record in FILE (a usage error, a crash)
podstep says so on stdout and exits with loadstep's code (1 if that was 0).
SIGINT and SIGTERM are passed on to loadstep as SIGTERM, once: loadstep drains,
writes its record marked "interrupted" and exits 130, and podstep prints that
record. podstep refuses ARGS that set loadstep's --output (FILE is its own) and
a FILE that already exists (it would report a stale record).

It is the entry point of the agent pods in deploy/kubernetes: Kubernetes
merges a container's stdout and stderr into one log, so the record must be
the log's last line, whole (see cmd/k8sstep).

Flags:
`

const usageTail = `
Exit codes:
  loadstep's      once loadstep has run (0 ok, 1 failed, 4 target lost, 130 interrupted)
  1               loadstep exited 0 but left no record in FILE, or podstep could not run it
  2               usage error (podstep's own flags and arguments)

Example (what an agent pod runs; the record is the last line of its log):
  podstep --step-file /work/step.json -- /usr/local/bin/loadstep \
    --url http://keycloak:8080/realms/bench/.well-known/openid-configuration \
    --scenario discovery -c 16 --duration 60s | tail -n 1 | aggregate summary -
`

type config struct {
	stepFile string
	command  []string
	version  bool
}

func newFlagSet(c *config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("podstep", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetInterspersed(false) // the first argument that is not a flag starts loadstep's command line
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.stepFile, "step-file", "", "`FILE` loadstep writes its record to (--output), then printed (required; must not exist yet)")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	return fs
}

func (c *config) validate() error {
	switch {
	case c.stepFile == "" || c.stepFile == "-":
		return cli.Usagef("--step-file FILE is required (a file, not '-')")
	case len(c.command) == 0:
		return cli.Usagef("no loadstep command line after the flags (podstep --step-file FILE -- LOADSTEP [ARGS...])")
	}
	for _, a := range c.command[1:] {
		if a == "--" {
			break
		}
		short := strings.HasPrefix(a, "-o") // -o FILE, -oFILE, -o=FILE
		if short || a == "--output" || strings.HasPrefix(a, "--output=") {
			return cli.Usagef("loadstep argument %q sets the output: podstep sets --output=%s itself", a, c.stepFile)
		}
	}
	if _, err := os.Lstat(c.stepFile); err == nil {
		return cli.Usagef("--step-file %s exists already: podstep reports only a record loadstep writes now", c.stepFile)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("checking --step-file %s: %w", c.stepFile, err)
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := newFlagSet(&c)
	if code, done := (cli.Help{Tool: "podstep", Head: usageHead, Tail: usageTail}).Parse(fs, args, &c.version, stdout, stderr); done {
		return code
	}
	c.command = fs.Args()
	if err := c.validate(); err != nil {
		return cli.Fail(stderr, "podstep", err)
	}
	out := &tracked{w: stdout}
	code, err := runLoadstep(ctx, c, out)
	if err != nil {
		return cli.Fail(stderr, "podstep", err)
	}
	return report(c.stepFile, code, out)
}

// runLoadstep runs the command line with --output=stepFile, its stdout and
// stderr on out, and returns its exit code. The context's end (the first
// SIGINT or SIGTERM) sends it SIGTERM and waits for it to exit.
func runLoadstep(ctx context.Context, c config, out io.Writer) (int, error) {
	args := append([]string{"--output=" + c.stepFile}, c.command[1:]...)
	cmd := exec.CommandContext(ctx, c.command[0], args...)
	cmd.Stdout, cmd.Stderr = out, out // one writer: one pipe, one copier, writes in order
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return 0, fmt.Errorf("starting %s: %w", c.command[0], err)
	}
	return exitCode(cmd.ProcessState), nil
}

// exitCode is the process's exit status, or 128 + the signal that ended it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// report prints the record in file as the last line of out and returns
// the exit code: loadstep's, or 1 when loadstep succeeded but left no
// readable record.
func report(file string, code int, out *tracked) int {
	line, err := compactStep(file)
	if err != nil {
		out.endLine()
		fmt.Fprintf(out, "podstep: loadstep exited with status %d and no record to report: %v\n", code, err)
		if code == cli.ExitOK {
			return cli.ExitRuntime
		}
		return code
	}
	if code != cli.ExitOK {
		out.endLine()
		fmt.Fprintf(out, "podstep: loadstep exited with status %d; its record follows\n", code)
	}
	out.endLine()
	if _, err := out.Write(append(line, '\n')); err != nil {
		return cli.ExitRuntime
	}
	return code
}

// compactStep reads file, checks that it is a step record and returns it
// as compact JSON (no white space outside strings; members and values as
// loadstep wrote them).
func compactStep(file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if _, err := schema.DecodeStep(bytes.NewReader(raw), file); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return buf.Bytes(), nil
}

// tracked is a writer that remembers whether its output ends a line, so
// that the record starts a line of its own even when loadstep's last write
// did not end with a newline.
type tracked struct {
	w       io.Writer
	written bool
	lastNL  bool
}

func (t *tracked) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.written, t.lastNL = true, p[n-1] == '\n'
	}
	return n, err
}

// endLine writes a newline when the output so far ends inside a line.
func (t *tracked) endLine() {
	if t.written && !t.lastNL {
		_, _ = t.Write([]byte{'\n'})
	}
}
