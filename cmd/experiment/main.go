// Command experiment runs the experiments about idpbench itself that take
// whole runs (internal/experiment): "experiment warmup-check" (does the
// warmup rule reach a fixed long warmup's throughput?), "experiment
// false-alarms" (how often does compare call an unchanged target changed?)
// and "experiment invocations" (how much noise is between invocations?).
// scripts/warmup-check.sh and scripts/false-alarms.sh build the tools and
// exec it; it runs the run tool ($IDPBENCH_BIN/run) for each run.
package main

import (
	"context"
	"os"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/experiment"
)

const toolName = "experiment"

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], experiment.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ})
	stop()
	os.Exit(code)
}

// tool is experiment's subcommands, each running with e (its streams and
// environment) and logging as its script did ("15:04:05 warmup-check: ...").
func tool(e experiment.Env) cli.Tool {
	with := func(name string, f func(context.Context, []string, experiment.Env) error) func(context.Context, []string, cli.Env) error {
		e := e
		e.Log = cli.Logger{W: e.Stderr, Tag: name}
		return func(ctx context.Context, args []string, _ cli.Env) error { return f(ctx, args, e) }
	}
	return cli.Tool{
		Name:     toolName,
		Synopsis: "SUBCOMMAND [FLAGS]",
		About: "Runs an experiment about idpbench itself: several runs of the run tool\n" +
			"($IDPBENCH_BIN/run, each logging to DIR/runs/NAME.log), then their\n" +
			"comparison (internal/compare) and a summary in DIR. Rerunning resumes.\n" +
			"Its scripts (scripts/warmup-check.sh, scripts/false-alarms.sh) build the\n" +
			"tools and set IDPBENCH_ROOT and IDPBENCH_BIN. docs/design-reference.md#the-scripts.\n",
		Exits: "Exit status: 0 done, 1 a run failed, 2 usage error, 130 interrupted.",
		Examples: []string{
			"scripts/warmup-check.sh --product keycloak --fixed 60 --repeats 4",
			"scripts/false-alarms.sh --pairs 5 --repeats 5 --out results/false-alarms/today",
			"scripts/invocation-pilot.sh --products refop,hydra,keycloak --invocations 4 --windows 4",
		},
		Subcommands: []cli.Subcommand{
			{Name: "warmup-check", Summary: "a fixed warmup against the warmup rule: two runs, compare.md and warmups.tsv", Run: with("warmup-check", runWarmupCheck)},
			{Name: "false-alarms", Summary: "2N runs of one unchanged target compared in pairs: summary.txt counts the flags", Run: with("false-alarms", runFalseAlarms)},
			{Name: "invocations", Summary: "K fresh runs, N windows each: the noise between invocations against within one (PILOT.md)", Run: with("invocation-pilot", runInvocations)},
		},
	}
}

// run runs experiment with e's streams and environment; errors are named
// after the subcommand ("experiment warmup-check: ...").
func run(ctx context.Context, args []string, e experiment.Env) int {
	sub, err := tool(e).Dispatch(ctx, args, cli.Env{Stdout: e.Stdout, Stderr: e.Stderr})
	who := toolName
	if sub != "" {
		who += " " + sub
	}
	return cli.Done(e.Stderr, who, err)
}
