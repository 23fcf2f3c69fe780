// Command k8sstep measures one load step with N loadstep agents on
// Kubernetes (an Indexed Job, deploy/kubernetes) and merges their records
// into one step, as aggregate merge does (internal/k8sstep);
// scripts/k8s-step.sh builds the tools and runs it.
package main

import (
	"os"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/k8sstep"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := k8sstep.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
