// Command provision prepares a product for idpbench and records what it is:
// "provision NAME" provisions a product through its APIs (each registered
// product's own subcommand, products/NAME/provision.go); "provision meta"
// writes a product's idpbench.meta/v1 record through schema.Meta.
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
