package main

import (
	"context"
	"io"
	"testing"

	"github.com/idpbench/idpbench/internal/docstest"
	"github.com/idpbench/idpbench/internal/k8sstep"
)

// TestDocs: k8sstep behaves as every tool does, and every command line of
// the docs that names it (or scripts/k8s-step.sh) uses only its subcommands and flags.
func TestDocs(t *testing.T) {
	docstest.Check(t, docstest.Tool{Name: "k8sstep", Run: func(args []string, stdout, stderr io.Writer) int {
		return k8sstep.Run(context.Background(), args, stdout, stderr)
	}})
}
