package main

import (
	"context"
	"io"
	"testing"

	"github.com/idpbench/idpbench/internal/docstest"
	"github.com/idpbench/idpbench/internal/experiment"
)

// TestDocs: experiment behaves as every tool does, and every command line of
// the docs that names it (or a script that runs it) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "experiment", Run: func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, experiment.Env{Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	}})
}
