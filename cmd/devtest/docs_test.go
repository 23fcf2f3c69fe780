package main

import (
	"context"
	"io"
	"testing"

	"github.com/idpbench/idpbench/internal/docstest"
)

// TestDocs: devtest behaves as every tool does, and every command line of
// the docs that names it (or scripts/fuzz.sh, scripts/test-busy.sh) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "devtest", Run: func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	}})
}
