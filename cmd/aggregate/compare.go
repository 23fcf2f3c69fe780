package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/compare"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
	"github.com/idpbench/idpbench/products"
)

const compareUsage = `Usage: aggregate compare [FLAGS] OLD NEW

Puts two runs side by side: per product x scenario, OLD's and NEW's
throughput (qps) and latency (p50, p99) -- each the median over the measured
windows, with its 95% confidence interval -- the change in percent, and the
p-value of a two-sided Mann-Whitney U test (benchstat's test, from
golang.org/x/perf/benchmath). "~" replaces a change that is not significant
at --alpha; "~ (too few windows: ...)" marks one that cannot be tested.

Samples: one per measured window. Repeat every ladder step with
'scripts/run-comparison.sh --repeats N' (env IDPBENCH_REPEATS), which
measures N rounds of every scenario's ladder, so that a step's windows are
spread over the run; at alpha 0.05 a difference can be significant only
with >= 4 windows per side, and 5-10 give the test power (measured: 1 of 20
unchanged cells flagged on qps with 5 spread windows, 6 of 20 with the same
windows back to back; results/false-alarms). A step's one-second
intervals are not samples by default: they are not independent (tested on
them, back-to-back windows of one unchanged server differ "significantly"
most of the time; --unit interval shows it, scripts/false-alarms.sh counts
it).

OLD and NEW are each a run directory (results/ID), a product directory, a
step file or a JSON-lines stream of steps; "-" reads stdin (one side only).
By default each cell is compared at OLD's steady-state level (the report's
rule), matched in NEW by connections and rate; --all-steps compares every
ladder level both have. Cells on one side only are listed, never dropped.
Listed as not comparable, with the reason: another success rule, count
unit or latency model; no step in NEW at OLD's steady connection count;
windows on either side that are not a steady state (errors, an
interrupted window, failed connects, a driver-limited step).

--fail-on SPEC is a regression gate: comma-separated rules METRIC<-N% or
METRIC>+N% (METRIC: qps, p50, p99, capacity, ref) and the word missing. A
rule fails when a SIGNIFICANT change crosses it (qps<-5%: qps fell by more
than 5%). capacity tests the windows of each side's plateau (the report's
capacity), at OLD's reference host speed where both sides have a host slope,
whatever level each side's steady state fell on; ref tests the cell's ratio
to the reference product (the reference OP), paired within each run's
interleaved rounds (Welch's t test of the rounds' log ratios, 3 rounds a
side): the machine's speed cancels within a round, so it asks whether the
product lost ground, not whether the machine was slower; missing
fails when a cell of OLD is absent, N/A or not comparable in NEW. The gate's
verdict follows the table, and the failing rows go to stderr.

Exit status: 0 no regression (or no --fail-on), 1 a significant change
crosses a --fail-on threshold, 2 usage or input error, 3 undecided: a
change crosses a threshold but a side has too few windows to test it,
130 interrupted.
`

const compareExample = `  scripts/run-comparison.sh --quick --only oidc --repeats 5 --run-id base
  # ... change the IdP ...
  scripts/run-comparison.sh --quick --only oidc --repeats 5 --run-id pr
  aggregate compare --fail-on 'qps<-5%,p99>+10%' results/base results/pr > compare.md
  aggregate compare --all-steps --format tsv results/base/oidc results/pr/oidc
  # how well two runs of one revision reproduce each other's reported numbers
  aggregate compare --agree 5% results/reference results/full-2 > REPRODUCE.md
  # what the container costs: one product native (OLD) and in compose mode (NEW)
  aggregate compare --footprint results/nvc-native results/nvc-compose
`

type compareConfig struct {
	old, new  string
	format    string
	alpha     float64
	allSteps  bool
	failOn    string
	unit      string
	agree     string
	footprint bool
}

func (c *compareConfig) validate(args []string) (*compare.Gate, error) {
	if len(args) != 2 {
		return nil, cli.Usagef("compare: want two inputs, OLD and NEW (got %d)", len(args))
	}
	c.old, c.new = args[0], args[1]
	if c.old == "-" && c.new == "-" {
		return nil, cli.Usagef("compare: \"-\" (stdin) may be OLD or NEW, not both")
	}
	if !slices.Contains(compare.Formats(), c.format) {
		return nil, cli.Usagef("compare: --format %q: want one of %s", c.format, strings.Join(compare.Formats(), ", "))
	}
	if !(c.alpha > 0 && c.alpha < 1) || math.IsNaN(c.alpha) {
		return nil, cli.Usagef("compare: --alpha %g: want a probability between 0 and 1, e.g. 0.05", c.alpha)
	}
	if c.unit != compare.UnitWindow && c.unit != compare.UnitInterval {
		return nil, cli.Usagef("compare: --unit %q: want %s or %s", c.unit, compare.UnitWindow, compare.UnitInterval)
	}
	if c.unit == compare.UnitInterval && c.failOn != "" {
		return nil, cli.Usagef("compare: --unit interval cannot gate (--fail-on): its samples are not independent")
	}
	if c.agree != "" {
		if c.allSteps {
			return nil, cli.Usagef("compare: --agree compares each run's steady cell: not with --all-steps")
		}
		if _, err := c.agreeBound(); err != nil {
			return nil, err
		}
	}
	if c.footprint && c.format != compare.FormatMarkdown {
		return nil, cli.Usagef("compare: --footprint is in the Markdown format only, not --format %s", c.format)
	}
	if c.failOn == "" {
		return nil, nil
	}
	g, err := compare.ParseGate(c.failOn)
	if err != nil {
		return nil, cli.Usagef("compare: --fail-on %q: %v", c.failOn, err)
	}
	return &g, nil
}

// agreeBound parses --agree: "5%" or "5", a percentage above 0.
func (c *compareConfig) agreeBound() (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(c.agree, "%"), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, cli.Usagef("compare: --agree %q: want a percentage above 0, e.g. 5%%", c.agree)
	}
	return v, nil
}

func runCompare(ctx context.Context, args []string, e env) error {
	c := compareConfig{}
	fs := cli.NewFlagSet("compare")
	fs.StringVarP(&c.format, "format", "f", compare.FormatMarkdown, "output `FORMAT`: md (a Markdown table for a pull request), json (one object per row), tsv")
	fs.Float64Var(&c.alpha, "alpha", compare.DefaultAlpha, "significance level of the two-sided test")
	fs.BoolVar(&c.allSteps, "all-steps", false, "compare every ladder level both sides have, not only the steady state")
	fs.StringVar(&c.unit, "unit", compare.UnitWindow, "what one sample is: window, or interval (one-second intervals: not independent, for studying noise only; no --fail-on)")
	fs.StringVar(&c.agree, "agree", "", "add how many cells' reported steady throughput and requests per IdP CPU-second (each run at its own steady level) agree within `PCT`, e.g. 5%, with the median difference")
	fs.BoolVar(&c.footprint, "footprint", false, "add each product's cold starts (A, B: seconds to ready, peak) and memory at steady state (IdP, stack), side by side: single readings, no test (Markdown only)")
	out := outputFlag(fs, "the table (or the rows of --format)")
	fs.StringVar(&c.failOn, "fail-on", "", "regression gate `SPEC`, e.g. 'qps<-5%,p99>+10%,missing' (exit 1 on a significant crossing)")
	if err := parse(fs, args, compareUsage, compareExample, e); err != nil {
		return err
	}
	gate, err := c.validate(fs.Args())
	if err != nil {
		return err
	}
	old, err := loadSide(ctx, "OLD", c.old, e)
	if err != nil {
		return err
	}
	new, err := loadSide(ctx, "NEW", c.new, e)
	if err != nil {
		return err
	}
	res := compare.Result{Old: compare.Describe(old), New: compare.Describe(new), Alpha: c.alpha, AllSteps: c.allSteps, Unit: c.unit,
		Rows: compare.Compare(old, new, compare.Options{Alpha: c.alpha, AllSteps: c.allSteps, Unit: c.unit, References: products.References()}), Gate: gate}
	if c.footprint {
		res.Footprints = compare.Footprints(old, new)
	}
	if c.agree != "" {
		bound, _ := c.agreeBound() // validated above
		a := compare.Agree(res.Rows, bound)
		pairs := compare.AgreePairs(old, new, products.References())
		a.Pairs = &pairs
		res.Agreement = &a
	}
	if gate != nil {
		v := gate.Check(res.Rows)
		res.Verdict = &v
	}
	err = writeOutput(*out, e, func(w io.Writer) error {
		if err := compare.Write(w, res, c.format); err != nil {
			return cli.Usagef("compare: %v", err) // exit 2: 1 is a regression
		}
		return nil
	})
	if err != nil {
		return err
	}
	return verdictError(res, e)
}

// loadSide reads one input; an error (unreadable, malformed, no steps) is
// a usage error, so that exit 1 always means a regression.
func loadSide(ctx context.Context, which, path string, e env) (compare.Side, error) {
	in, err := model.LoadRequired(ctx, []string{path}, e.Stdin, warner(e))
	switch {
	case errors.Is(err, context.Canceled):
		return compare.Side{}, err
	case err != nil:
		return compare.Side{}, cli.Usagef("compare: %s: %v", which, err)
	}
	ladder := 0
	for _, sf := range in.Steps {
		if p := sf.Step.Labels["phase"]; p == "" || p == steps.PhaseLadder {
			ladder++
		}
	}
	if ladder == 0 {
		return compare.Side{}, cli.Usagef("compare: %s %s: no ladder step records (found %d steps, %d meta records)",
			which, path, len(in.Steps), len(in.Metas))
	}
	return compare.Side{Name: path, Inputs: in}, nil
}

// verdictError turns the gate's verdict into the exit status, listing the
// rows on stderr.
func verdictError(res compare.Result, e env) error {
	v := res.Verdict
	if v == nil {
		return nil
	}
	for _, f := range v.Failed {
		fmt.Fprintf(e.Stderr, "%s: FAIL %s: %s\n", toolName, f.Row.Key(), f.Why)
	}
	for _, f := range v.Undecided {
		fmt.Fprintf(e.Stderr, "%s: UNDECIDED %s: %s\n", toolName, f.Row.Key(), f.Why)
	}
	switch {
	case len(v.Failed) > 0:
		return cli.CodeError{Code: cli.ExitRuntime, Err: fmt.Errorf("--fail-on %q: %s", res.Gate.Spec, v.Summary())}
	case len(v.Undecided) > 0:
		return cli.CodeError{Code: cli.ExitUndecided, Err: fmt.Errorf("--fail-on %q: %s (more windows: --repeats)", res.Gate.Spec, v.Summary())}
	}
	return nil
}
