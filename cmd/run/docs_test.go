package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/docstest"
	"github.com/idpbench/idpbench/internal/run"
)

// TestDocs: run behaves as every tool does, and every command line of
// the docs that names it (or scripts/run-comparison.sh) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "run", Hint: run.HelpName, Run: func(args []string, stdout, stderr io.Writer) int {
		return run.Main(context.Background(), args, run.Env{Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" },
			Now: time.Now, Started: time.Now(), Pid: os.Getpid()})
	}})
}
