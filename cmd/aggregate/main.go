// Command aggregate turns idpbench result files into COMPARISON.md (report),
// merges the step files of several load agents exactly (merge) and prints
// one line per step for shell pipes (summary).
package main

import (
	"os"

	"github.com/idpbench/idpbench/internal/cli"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
