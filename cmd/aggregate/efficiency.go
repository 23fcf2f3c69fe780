package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

type efficiencyConfig struct {
	step, samples, output string
}

func (c efficiencyConfig) validate() error {
	switch {
	case c.step == "" || c.samples == "":
		return cli.Usagef("efficiency: --step and --samples are both required")
	case c.output == "":
		return cli.Usagef("efficiency: -o/--output must not be empty (use - for stdout)")
	}
	return nil
}

const efficiencyUsage = `Usage: aggregate efficiency --step STEP.json --samples SAMPLES.jsonl

Prints one step's requests per CPU-second as one JSON object: ok (successful
requests, or iterations), window_s (measured seconds), idp_source (the
sampler source taken as the product's process tree), idp_cpu_s and db_cpu_s
(CPU-seconds of the IdP and of PostgreSQL over the window, integrated from
the sampler's records), req_per_cpu_s = ok / idp_cpu_s and req_per_cpu_s_pg =
ok / (idp_cpu_s + db_cpu_s); a missing figure has its reason in na / pg_na.
The figure of the report's req/CPU-s column, for one step.
`

const efficiencyExample = `  aggregate efficiency --step results/latest/refop/discovery-c8.json \
    --samples results/latest/refop/samples-20261130T100000Z.jsonl | jq .req_per_cpu_s
`

func runEfficiency(ctx context.Context, args []string, e env) error {
	var c efficiencyConfig
	fs := cli.NewFlagSet("efficiency")
	fs.StringVar(&c.step, "step", "", "the step record `FILE` (JSON) whose measured window is taken")
	fs.StringVar(&c.samples, "samples", "", "the sampler's records `FILE` (JSON lines) covering that window")
	fs.StringVarP(&c.output, "output", "o", "-", "write the JSON object to `FILE`, atomically; - = stdout")
	if err := parse(fs, args, efficiencyUsage, efficiencyExample, e); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	step, err := load(ctx, []string{c.step}, e)
	if err != nil {
		return err
	}
	if len(step.Steps) != 1 {
		return fmt.Errorf("reading %s: want one step record, found %d", c.step, len(step.Steps))
	}
	samples, err := load(ctx, []string{c.samples}, e)
	if err != nil {
		return err
	}
	if len(samples.Samples) == 0 {
		return fmt.Errorf("reading %s: no sampler records", c.samples)
	}
	var all []schema.Sample
	for _, sf := range samples.Samples {
		all = append(all, sf.Samples...)
	}
	return writeOutput(c.output, e, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(model.EfficiencyRowOf(step.Steps[0], all))
	})
}
