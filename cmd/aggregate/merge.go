package main

import (
	"context"
	"fmt"
	"io"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/steps"
)

type mergeConfig struct {
	inputs []string
	output string
}

func (c mergeConfig) validate() error {
	if c.output == "" {
		return cli.Usagef("merge: -o/--output must not be empty (use - for stdout)")
	}
	return validateInputs("merge", c.inputs)
}

const mergeUsage = `Usage: aggregate merge [FLAGS] FILE...

Merges the step records (idpbench.step/v1) of several loadstep agents that ran
the same step against the same target into one step record, exactly: the
HdrHistograms are merged bucket by bucket (identical geometry required),
requests/ok/errors/status codes/connections are summed, intervals are merged
by index, and latency_ms is recomputed from the merged histogram. qps is the
sum of the agents' qps, which is only true for one shared measured window: each
agent's start and end must lie within one interval (interval_s, 1 s when unset)
of the first file's, else the file that does not overlap is named in an error
(start the agents at the same moment with the same loadstep --warmup and
--duration, best with one loadstep --start-at). product, product_version,
scenario, check (the success rule), target_url, interval_s and latency_model
must match. Driver CPU is summed, limited if any agent was limited; status is
complete only when every agent completed; agents counts the merged loadstep processes. Rate-mode records
(all or none) sum late and each interval's late, keep the largest late_max_ms and
merge the corrected histograms, overall and per interval. Iteration records
(count_unit "iteration") must have the same request_order; http_requests and
requests_by_name are merged name by name (counts summed, histograms merged).

Segments (loadstep --segment I/N, usually with one --start-at): when the records
carry a segment they must be one whole, else the merge is refused naming the
files: every record a segment, all of the same N, every index 0..N-1 exactly
once (a gap names the missing index, an overlap the index and both files), the
same total_connections and total_rate_rps, which the agents' connections and
rate_rps add up to (besides the same scenario, check and histogram geometry, as
for every merge). The merged record has no segment; connections and rate_rps
are the whole step's (3 agents at c=8: c=24), agents is N. Every merged record
says start_skew_ms: max - min of the agents' actual starts (started_at; start
for records without it), in ms; start_at is kept when all agents share it.
A FILE may hold several records; a directory is walked for *.json; "-" or no
FILE reads stdin.
`

const mergeExample = `  aggregate merge agent-*.json | aggregate summary -
  aggregate merge agent-0.json agent-1.json agent-2.json | jq '{agents, connections, requests, start_skew_ms}'
  aggregate merge -o results/latest/hydra/discovery-c64.json agents/discovery-c64-*.json
`

func runMerge(ctx context.Context, args []string, e env) error {
	var c mergeConfig
	fs := cli.NewFlagSet("merge")
	fs.StringVarP(&c.output, "output", "o", "-", "write the merged step JSON to `FILE`, atomically; - = stdout")
	if err := parse(fs, args, mergeUsage, mergeExample, e); err != nil {
		return err
	}
	c.inputs = inputs(fs)
	if err := c.validate(); err != nil {
		return err
	}
	in, err := load(ctx, c.inputs, e)
	if err != nil {
		return err
	}
	if n := len(in.Metas) + len(in.Coldstarts) + len(in.Samples); n > 0 {
		warner(e)(fmt.Sprintf("merge reads step records only; ignoring %d other records/files", n))
	}
	s, err := steps.Merge(in.Steps)
	if err != nil {
		return err
	}
	return writeOutput(c.output, e, func(w io.Writer) error {
		if err := steps.EncodeStep(w, s); err != nil {
			return fmt.Errorf("writing %s: %w", c.output, err)
		}
		return nil
	})
}
