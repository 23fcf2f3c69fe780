// Command podstep runs one loadstep in a container and makes its step
// record the last line of the container's log: it starts loadstep with
// --output=FILE, passes loadstep's stdout and stderr on to its own stdout,
// waits for it to end, and then prints FILE's record as one line of compact
// JSON. A Kubernetes agent pod (deploy/kubernetes) runs it, and k8sstep
// (cmd/k8sstep, behind scripts/k8s-step.sh) takes the last line of
// `kubectl logs` as the agent's step.
//
// Why one stream: a container's stdout and stderr are two pipes that the
// runtime copies into one log file, each by its own reader, and it splits
// a line longer than 16 KiB into several entries. A step record written to
// stdout while loadstep's summary line goes to stderr may land before,
// after or between the pieces of the record. Here every byte goes through
// one pipe, and the record is written only after loadstep has exited, so
// nothing can follow or interleave it. A distroless image has no shell to
// do this with `loadstep -o f 2>&1; cat f`.
package main

import (
	"os"

	"github.com/idpbench/idpbench/internal/cli"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
