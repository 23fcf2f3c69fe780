package main

import (
	"context"
	"io"
	"testing"

	"github.com/idpbench/idpbench/cmd/bench/internal/bench"
	"github.com/idpbench/idpbench/internal/docstest"
)

// TestDocs: bench behaves as every tool does, and every command line of
// the docs that names it (or scripts/bench.sh) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "bench", Run: func(args []string, stdout, stderr io.Writer) int {
		return bench.Run(context.Background(), args, stdout, stderr)
	}})
}
