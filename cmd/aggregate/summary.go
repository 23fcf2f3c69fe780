package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/steps"
)

type summaryConfig struct {
	inputs []string
	format string
	output string
}

func (c summaryConfig) validate() error {
	if !slices.Contains(steps.SummaryFormats(), c.format) {
		return cli.Usagef("summary: --format %q: want one of %s", c.format, strings.Join(steps.SummaryFormats(), ", "))
	}
	if c.output == "" {
		return cli.Usagef("summary: -o/--output must not be empty (use - for stdout)")
	}
	return validateInputs("summary", c.inputs)
}

const summaryUsage = `Usage: aggregate summary [FLAGS] FILE...

Prints one line per step record: product, scenario, c (connections), qps
(requests/s), p50_ms, p95_ms, p99_ms (milliseconds), error_rate, status, file.
text: aligned columns under a header line, rounded numbers, error rate in
percent. csv: a header line, full-precision numbers, error rate as a fraction.
json: one JSON object per line with the same fields (error_rate a fraction) and
check, requests and histogram_count (the values in the latency histogram).
A FILE may hold several records; a directory is walked for *.json; "-" or no
FILE reads stdin. Records other than steps are skipped; a FILE that holds no
idpbench record at all is an error naming it.
`

const summaryExample = `  aggregate merge agent-*.json | aggregate summary -
  aggregate summary --format csv -o hydra.csv results/latest/hydra
`

func runSummary(ctx context.Context, args []string, e env) error {
	var c summaryConfig
	fs := cli.NewFlagSet("summary")
	fs.StringVarP(&c.format, "format", "f", steps.FormatText, "output `FORMAT`: text (aligned columns), csv, or json (JSON lines)")
	out := outputFlag(fs, "the lines")
	if err := parse(fs, args, summaryUsage, summaryExample, e); err != nil {
		return err
	}
	c.inputs, c.output = inputs(fs), *out
	if err := c.validate(); err != nil {
		return err
	}
	in, err := load(ctx, c.inputs, e)
	if err != nil {
		return err
	}
	return writeOutput(c.output, e, func(w io.Writer) error {
		return steps.WriteSummary(w, steps.SummaryRows(in.Steps), c.format)
	})
}
