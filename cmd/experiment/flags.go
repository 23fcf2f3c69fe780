package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/experiment"
)

const warmupHead = `Usage: scripts/warmup-check.sh [--product P] [--scenario S] [--fixed SECONDS]
                               [--repeats R] [--out DIR]
       (experiment warmup-check FLAGS)

Does the stability warmup rule reach the throughput a fixed long warmup
reaches? Two runs of one product's ladder on freshly started products, arm
"fixed" (a fixed warmup: the rule run to its cap every time, a tolerance no
series meets, no JIT condition) and arm "rule" (the full profile's rule),
then every level compared (aggregate compare --all-steps fixed rule: each
level side by side with its difference and p-value) into DIR/compare.md,
printed on stdout, and the warmups each step spent into DIR/warmups.tsv:
arm, start, connections, repeat, warmup_s (to 0.1 s), warmup_stable
("fixed" in the fixed arm), qps, jit_window_pct (N/A without a JIT) and
jit_warmup_pct_by_10s (the JIT's share of a core during the warmup, averaged
over each 10 s, rounded), sorted by arm, then start.

Environment: IDPBENCH_LADDER (default "2 8 32"), IDPBENCH_DURATION_S
(default 10), IDPBENCH_GCJITTER_S (default 5), the rule's IDPBENCH_WARMUP_S
/ IDPBENCH_WARMUP_MAX_S (the ladder's defaults). The runs go to DIR/runs
(IDPBENCH_RESULTS), their logs to DIR/runs/ARM.log. Rerunning resumes both
runs. Rules and records: docs/design-methodology.md#warmup.

Flags:
`

const warmupTail = `
Exit status: 0 done, 1 a run failed, 2 usage, 130 interrupted.

Example:
  scripts/warmup-check.sh --product keycloak --fixed 60 --repeats 4
`

const falseAlarmsHead = `Usage: scripts/false-alarms.sh [--pairs N] [--repeats R] [--out DIR]
       (experiment false-alarms FLAGS)

How often aggregate compare calls an unchanged target changed. Runs 2N quick
runs of the generic oidc adapter back to back (its default configuration:
the reference OP, started by the adapter), each with --repeats R, compares
run 2i-1 with run 2i (i = 1..N) and counts the cells flagged significant,
per sample unit (window, interval). Nothing changed between the runs, so
every flag is a false alarm: at alpha 0.05 about 5% of the tests may be.

The runs go to DIR/runs/run-<i> (a run whose oidc/meta.json exists finished
before and is kept), their logs to DIR/runs/run-<i>.log; the comparisons to
DIR/pair-<i>.<unit>.tsv and DIR/pair-<i>.md, the counts to DIR/summary.txt,
printed on stdout. A pair whose runs fail is reported and counted as
failed, never as a comparison.

Environment: IDPBENCH_SCENARIOS (default "discovery client_credentials
introspect userinfo"), IDPBENCH_LADDER (default "8"), IDPBENCH_OIDC_CONFIG
(default: the reference OP), IDPBENCH_GCJITTER_S (default 5), the ladder's
variables. Rules and records: docs/design-reference.md#the-scripts; docs/ci.md (how
often it cries wolf).

Flags:
`

const falseAlarmsTail = `
Exit status: 0 done (whatever the count), 1 a run or a comparison failed,
2 usage, 130 interrupted.

Example:
  scripts/false-alarms.sh --pairs 5 --repeats 5 --out results/false-alarms/today
`

const invocationsHead = `Usage: scripts/invocation-pilot.sh [--products P,P] [--scenario S] [--connections C]
                                  [--invocations K] [--windows N] [--out DIR]
       (experiment invocations FLAGS)

How much of a product's throughput noise is between fresh invocations
(process starts, a new database) rather than between windows of one
invocation? Runs K runs of the run tool, each with its own PostgreSQL and a
fresh start of every product, measuring one scenario at one connection count
in N windows per product (the full profile's warmup rule before each; no
A/A twins, no windows at shares). Then per product: the variance of
ln qps split into its part between invocations and within one (a one-way
random-effects ANOVA, with the F test of "no invocation effect"), the host
probe's part between invocations (the machine's share), the capacity's 95%
interval over the windows alone against the one over invocations (a
hierarchical bootstrap), and Kalibera & Jones's windows per invocation, in
DIR/PILOT.md (printed on stdout) with every window in DIR/windows.tsv.

The runs go to DIR/runs/inv-<i> (one whose every product has a meta.json
finished before and is kept), their logs to DIR/runs/inv-<i>.log.
Environment: IDPBENCH_GCJITTER_S (default 5), the ladder's variables.
Rules and records: docs/design-methodology.md#invocations.

Flags:
`

const invocationsTail = `
Exit status: 0 done, 1 a run failed, 2 usage, 130 interrupted.

Example:
  scripts/invocation-pilot.sh --products refop,hydra,keycloak --invocations 4 --windows 4
`

func runInvocations(ctx context.Context, args []string, e experiment.Env) error {
	v := experiment.Invocations{}
	fs := cli.NewFlagSet("invocations")
	fs.StringSliceVar(&v.Products, "products", []string{"refop", "hydra", "keycloak"}, "the `PRODUCTS` to run, comma-separated")
	fs.StringVar(&v.Scenario, "scenario", "client_credentials", "the `SCENARIO` to run")
	fs.IntVar(&v.Connections, "connections", 8, "the connection count `C` every window runs at")
	fs.IntVar(&v.Invocations, "invocations", 4, "`K` fresh invocations (runs)")
	fs.IntVar(&v.Windows, "windows", 4, "`N` windows per product in each invocation")
	fs.StringVar(&v.Out, "out", "", "where the runs, PILOT.md and windows.tsv go, `DIR` (default results/invocations/SCENARIO-cC)")
	if err := parse(fs, args, invocationsHead, invocationsTail, e); err != nil {
		return err
	}
	if err := v.Validate(); err != nil {
		return err
	}
	return v.Run(ctx, e)
}

func runWarmupCheck(ctx context.Context, args []string, e experiment.Env) error {
	w := experiment.WarmupCheck{}
	fs := cli.NewFlagSet("warmup-check")
	fs.StringVar(&w.Product, "product", "keycloak", "the `PRODUCT` to run")
	fs.StringVar(&w.Scenario, "scenario", "client_credentials", "the `SCENARIO` to run")
	fs.IntVar(&w.FixedS, "fixed", 60, "the fixed arm's warmup, in `SECONDS`")
	fs.IntVar(&w.Repeats, "repeats", 4, "`R` windows per level in each arm (4: the fewest a Mann-Whitney test at 0.05 can decide on)")
	fs.StringVar(&w.Out, "out", "", "where the runs, compare.md and warmups.tsv go, `DIR` (default results/warmup-check/PRODUCT-SCENARIO)")
	if err := parse(fs, args, warmupHead, warmupTail, e); err != nil {
		return err
	}
	if err := w.Validate(); err != nil {
		return err
	}
	return w.Run(ctx, e)
}

func runFalseAlarms(ctx context.Context, args []string, e experiment.Env) error {
	f := experiment.FalseAlarms{}
	fs := cli.NewFlagSet("false-alarms")
	fs.IntVar(&f.Pairs, "pairs", 5, "`N` pairs of runs")
	fs.IntVar(&f.Repeats, "repeats", 5, "`R` windows per ladder step")
	fs.StringVar(&f.Out, "out", "", "where the runs, the comparisons and summary.txt go, `DIR` (default results/false-alarms/<UTC date>)")
	if err := parse(fs, args, falseAlarmsHead, falseAlarmsTail, e); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	return f.Run(ctx, e)
}

// parse parses a subcommand's flags; it takes no arguments.
func parse(fs *pflag.FlagSet, args []string, head, tail string, e experiment.Env) error {
	if err := (cli.Help{Tool: toolName, Head: head, Tail: tail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unknown argument: %s (flags only)", fs.Arg(0))
	}
	return nil
}
