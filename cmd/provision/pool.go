package main

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
)

// "provision pool" records a pool an adapter minted: one schema.PoolInfo
// line appended to STATE/pools.jsonl, which "provision meta" reads into the
// meta's pools.

const poolHead = `Usage: provision pool --state DIR --scenario S --kind K --mode M --size N --flow F

Appends one record of a minted pool ({scenario, kind, mode, size, flow}) to
DIR/pools.jsonl, which "provision meta --state DIR" puts into the meta's
pools (the fairness appendix lists them). No credential is recorded.

Flags:
`

const poolTail = `
Example (after mintpool wrote 256 refresh tokens for S5):
  provision pool --state "$state" --scenario refresh --kind refresh_token --mode chain \
    --size 256 --flow admin-accept
`

// runPool is "provision pool".
func runPool(_ context.Context, args []string, e env) error {
	var p schema.PoolInfo
	var state string
	fs := cli.NewFlagSet("pool")
	fs.StringVar(&state, "state", "", "the adapter's state directory (required; must exist)")
	fs.StringVar(&p.Scenario, "scenario", "", "the scenario the pool feeds (required)")
	fs.StringVar(&p.Kind, "kind", "", "what it holds: access_token, refresh_token, assertion ... (required)")
	fs.StringVar(&p.Mode, "mode", "", "how loadstep uses it: reuse, consume or chain (required)")
	fs.IntVar(&p.Size, "size", 0, "credentials in it, >= 1 (required)")
	fs.StringVar(&p.Flow, "flow", "", "how it was minted: a mintpool flow, or the adapter's way (required)")
	if err := parse(fs, args, poolHead, poolTail, e); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return cli.Usagef("unexpected argument %q (provision pool takes flags only)", fs.Arg(0))
	case state == "":
		return cli.Usagef("--state is required")
	case !slices.Contains(scenarioNames(), p.Scenario):
		return cli.Usagef("--scenario %q: want one of %s", p.Scenario, strings.Join(scenarioNames(), ", "))
	case strings.TrimSpace(p.Kind) == "" || strings.TrimSpace(p.Flow) == "":
		return cli.Usagef("--kind and --flow are required")
	case !slices.Contains(schema.PoolModes, p.Mode):
		return cli.Usagef("--mode %q: want one of %s", p.Mode, strings.Join(schema.PoolModes, ", "))
	case p.Size < 1:
		return cli.Usagef("--size %d: want >= 1", p.Size)
	}
	if fi, err := os.Stat(state); err != nil || !fi.IsDir() {
		return cli.Usagef("--state %s: not a directory", state)
	}
	return product.RecordPool(state, p)
}
