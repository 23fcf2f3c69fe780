// Package devtest holds the developer's test runs that are neither unit
// tests nor benchmarks (cmd/devtest; scripts/fuzz.sh and scripts/test-busy.sh
// exec it, scripts/test.sh runs it): Fuzz runs every Go fuzz target of the
// repository one at a time, Busy runs the Go tests several times beside a
// busy loop, Static runs the static checks (gofmt, go vet, bash -n,
// shellcheck).
package devtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
)

// Module is the module path whose go.mod marks the repository's root.
const Module = "github.com/idpbench/idpbench"

// Env is what a run takes from its process instead of os.
type Env struct {
	Stdout, Stderr io.Writer // the go commands' output
	Log            cli.Logger
}

// Root returns the repository's root: dir when it is given (it must hold
// the module's go.mod), else the nearest directory holding it from the
// working directory up.
func Root(dir string) (string, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil || !isRoot(abs) {
			return "", cli.Usagef("--root %s: no go.mod of module %s there", dir, Module)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository: %w", err)
	}
	return rootFrom(wd)
}

// rootFrom walks up from dir to the directory holding the module's go.mod
// (products/refop/server's and deploy/kubernetes's own modules are passed over).
func rootFrom(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if isRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module %s in %s or above it (run it in the repository, or name it with --root)", Module, dir)
		}
	}
}

// isRoot reports whether dir/go.mod declares Module.
func isRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && modulePath(string(b)) == Module
}

// modulePath is the path of a go.mod's module directive ("" without one).
func modulePath(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			p, _, _ = strings.Cut(p, "//")
			return strings.Trim(strings.TrimSpace(p), `"`)
		}
	}
	return ""
}

// requireCmds fails as the scripts' require_cmd did, naming the first of
// names that is not on PATH.
func requireCmds(names ...string) error {
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			return fmt.Errorf("required command not found: %s", n)
		}
	}
	return nil
}

// Exit logs err as the scripts' die and usage_error do ("15:04:05 TAG:
// error: ...", one line; a usage error then the hint every tool prints,
// cli.Hint(help)) and returns the exit code: 0 for nil or a --help, 2
// usage, 130 interrupted (silently, as the scripts' trap did), 1 otherwise,
// its reason noted (cli.NoteReason).
func Exit(log cli.Logger, help string, err error) int {
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return cli.ExitOK
	case errors.Is(err, context.Canceled):
		return cli.ExitInterrupted
	}
	code, msg := cli.ExitCode(err), err.Error()
	log.Printf("error: %s", msg)
	if code == cli.ExitUsage {
		fmt.Fprintln(log.W, cli.Hint(help))
	} else {
		cli.NoteReason(msg)
	}
	return code
}
