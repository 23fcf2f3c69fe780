package main

import (
	"context"
	"io"
	"testing"

	"github.com/idpbench/idpbench/internal/docstest"
)

// TestDocs: gcjitter behaves as every tool does, and every command line of
// the docs that names it (or scripts/gcjitter.sh) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "gcjitter", Run: func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr, func(string) string { return "" })
	}})
}
