package main

import (
	"context"
	"io"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/products"
)

const steadyUsage = `Usage: aggregate steady [FLAGS] DIR...

Reads results like 'report' does and writes the main table as JSON lines, one
per scenario x product: the steady-state step's figures ("steady": true, with
c, qps, p50_ms, p95_ms, p99_ms, requests, failed, error_rate and the step's
file) or the N/A reason ("steady": false, "reason"). An iteration scenario (S2l,
S4) adds "unit": "iteration" (qps is iterations/s; requests, failed and the
percentiles are per iteration) and "by_name": {request name: {requests, failed,
p50_ms, p99_ms}}. A steady cell adds "server": the server's own count for
the scenario's endpoint in the window beside loadstep's (requests,
loadstep_requests, slack, agrees, errors, by_status, p50_ms, p95_ms, p99_ms
from its histogram buckets), or "na" with the reason. For scripts and tests that assert on the comparison without
parsing Markdown.
`

const steadyExample = `  aggregate steady results/latest | jq -r 'select(.product=="hydra") | [.id, .qps, .failed] | @tsv'
`

func runSteady(ctx context.Context, args []string, e env) error {
	fs := cli.NewFlagSet("steady")
	out := outputFlag(fs, "the JSON lines")
	if err := parse(fs, args, steadyUsage, steadyExample, e); err != nil {
		return err
	}
	in := inputs(fs)
	if *out == "" {
		return cli.Usagef("steady: -o/--output must not be empty (use - for stdout)")
	}
	if err := validateInputs("steady", in); err != nil {
		return err
	}
	loaded, err := load(ctx, in, e)
	if err != nil {
		return err
	}
	r := model.Build(loaded, model.Options{ToolVersion: cli.Version(), ServerMetrics: products.ServerMetrics})
	return writeOutput(*out, e, func(w io.Writer) error { return model.WriteCellRows(w, model.CellRows(r)) })
}
