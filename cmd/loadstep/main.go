// Command loadstep runs one load step against one endpoint of an OpenID
// Connect provider — a warmup, then a measured window — and writes the
// result as an idpbench.step/v1 JSON record.
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
