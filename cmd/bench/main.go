// Command bench measures loadstep against wrk on the same local targets in
// the same run (cmd/bench/internal/bench); scripts/bench.sh builds the tools, installs
// wrk and nginx, and finds the targets.
package main

import (
	"os"

	"github.com/idpbench/idpbench/cmd/bench/internal/bench"
	"github.com/idpbench/idpbench/internal/cli"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := bench.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
