// Command devtest runs the developer's test runs that are neither unit
// tests nor benchmarks (cmd/devtest/internal/devtest): "devtest fuzz", every Go fuzz
// target of the repository one at a time, "devtest busy", the Go tests
// several times beside a busy loop, and "devtest static", the static checks
// (gofmt, go vet, bash -n, shellcheck). scripts/fuzz.sh and
// scripts/test-busy.sh build the tools and exec it from the repository's
// root; scripts/test.sh builds them and runs "devtest static" first.
package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/idpbench/idpbench/cmd/devtest/internal/devtest"
	"github.com/idpbench/idpbench/internal/cli"
)

const toolName = "devtest"

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// logTags are the subcommands' log tags: their scripts'.
var logTags = map[string]string{"fuzz": "fuzz", "busy": "test-busy", "static": "test"}

func tool() cli.Tool {
	return cli.Tool{
		Name:     toolName,
		Synopsis: "SUBCOMMAND [FLAGS]",
		About: "Runs the developer's test runs that are neither unit tests nor benchmarks,\n" +
			"from the repository's root (found from the working directory up, or --root).\n" +
			"Their scripts (scripts/fuzz.sh, scripts/test-busy.sh; scripts/test.sh for\n" +
			"static) build the tools and run it. docs/design-reference.md#the-scripts.\n",
		Exits: "Exit status: 0 passed, 1 a target, a run or a check failed, 2 usage error, 130 interrupted.",
		Examples: []string{
			"scripts/fuzz.sh --time 5m",
			"scripts/test-busy.sh --runs 5 2>&1 | tee results/test-busy/\"$(git rev-parse --short HEAD)\".log",
			"go run ./cmd/devtest static",
		},
		Subcommands: []cli.Subcommand{
			{Name: "fuzz", Summary: "every Go fuzz target of the repository, one at a time (fuzz.sh)", Run: runFuzz},
			{Name: "busy", Summary: "go test -race -count=1 -p 1 ./... N times beside a busy loop (test-busy.sh)", Run: runBusy},
			{Name: "static", Summary: "gofmt, go vet, bash -n, shellcheck and no '| grep -q' on the repository (test.sh's first phase)", Run: runStatic},
		},
	}
}

// run runs devtest with the given streams; an error is one log line, as
// the scripts' were ("15:04:05 fuzz: error: ...").
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sub, err := tool().Dispatch(ctx, args, cli.Env{Stdout: stdout, Stderr: stderr})
	tag := logTags[sub]
	if tag == "" {
		tag = toolName
	}
	return devtest.Exit(cli.Logger{W: stderr, Tag: tag}, strings.TrimSpace(toolName+" "+sub), err)
}

// env is a subcommand's devtest.Env.
func env(sub string, e cli.Env) devtest.Env {
	return devtest.Env{Stdout: e.Stdout, Stderr: e.Stderr, Log: cli.Logger{W: e.Stderr, Tag: logTags[sub]}}
}
