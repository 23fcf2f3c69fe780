package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/model"
)

const toolName = "aggregate"

// env is the process's streams, passed instead of touching os.
type env = cli.Env

// warner returns a function printing a warning on e's stderr.
func warner(e env) func(string) {
	return func(msg string) { fmt.Fprintf(e.Stderr, "%s: warning: %s\n", toolName, msg) }
}

func subcommands() []cli.Subcommand {
	return []cli.Subcommand{
		{Name: "report", Summary: "results -> COMPARISON.md", Run: runReport},
		{Name: "merge", Summary: "merge the step files of several agents into one exact step", Run: runMerge},
		{Name: "summary", Summary: "one line per step (text, csv or json lines) for shell pipes", Run: runSummary},
		{Name: "steady", Summary: "the main table as JSON lines: steady-state figures or the N/A reason", Run: runSteady},
		{Name: "compare", Summary: "OLD vs NEW: each cell's change and whether it is significant; a regression gate", Run: runCompare},
		{Name: "phase", Summary: "append one phase record (run-comparison.sh's wall-time record) to a phases file", Run: runPhase},
		{Name: "ladder", Summary: "knee | candidates | pool-size: where round 1 of a ladder stops; which levels later rounds repeat; a step's pool size", Run: runLadder},
		{Name: "efficiency", Summary: "one step's requests per CPU-second from a sampler's records (JSON)", Run: runEfficiency},
		{Name: "sustained", Summary: "every rate-mode window judged again by the sustain rule; --check-report: COMPARISON.md respects it", Run: runSustained},
	}
}

func tool() cli.Tool {
	return cli.Tool{
		Name:     toolName,
		Synopsis: "SUBCOMMAND [FLAGS] [INPUT...]",
		About: "Reads idpbench result records (step, meta, coldstart, sample JSON) and writes\n" +
			"reports. Inputs are files or directories; \"-\" (or no input) reads stdin.\n",
		Exits: "Exit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted ('compare --help'\nhas its own: 1 is a regression there).",
		Examples: []string{
			"scripts/ladder.sh hydra discovery && aggregate report results/latest -o results/latest/COMPARISON.md",
			"aggregate merge agent-*.json | aggregate summary -",
			"aggregate compare --fail-on 'qps<-5%,p99>+10%' results/base results/pr",
			"aggregate ladder knee --dir results/latest/hydra --scenario discovery --ladder \"2 4 8 16 32 64 128\"",
		},
		Subcommands: subcommands(),
	}
}

// run runs aggregate; errors carry the tool's name only (a subcommand's
// own errors name it: "aggregate: compare: ..."), and a usage error points
// at the --help that explains it ("Try 'aggregate compare --help'.").
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sub, err := tool().Dispatch(ctx, args, env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if errors.Is(err, pflag.ErrHelp) {
		return cli.ExitOK
	}
	return cli.FailHint(stderr, toolName, strings.TrimSpace(toolName+" "+sub), err)
}

// parse parses a subcommand's args; --help prints usage, the flags, the
// exit statuses every subcommand shares unless usage states its own
// ("Exit status:"), and the example.
func parse(fs *pflag.FlagSet, args []string, usage, example string, e env) error {
	exits := "\nExit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted.\n"
	if strings.Contains(usage, "\nExit status:") {
		exits = ""
	}
	h := cli.Help{Tool: toolName, Head: usage + "\nFlags:\n", Tail: exits + "\nExample:\n" + example}
	err := h.ParseSub(fs, args, e.Stdout)
	if errors.As(err, new(cli.UsageError)) {
		return cli.Usagef("%s: %v", fs.Name(), errors.Unwrap(err))
	}
	return err
}

// outputFlag adds -o/--output to fs: what is written there, default "-"
// (stdout).
func outputFlag(fs *pflag.FlagSet, what string) *string {
	return fs.StringP("output", "o", "-", "write "+what+" to `FILE`, atomically; - = stdout")
}

// writeOutput writes through write to path ("-": stdout), atomically: a
// failure leaves no file, and nothing reaches stdout before the inputs were
// read (the callers open it last).
func writeOutput(path string, e env, write func(w io.Writer) error) error {
	f, err := atomicfile.Create(path, 0o644, e.Stdout)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// load reads a subcommand's inputs (model.LoadRequired): a named file or
// directory without any idpbench record is bad input, exit 2, as compare
// says of a side without steps.
func load(ctx context.Context, paths []string, e env) (*model.Inputs, error) {
	in, err := model.LoadRequired(ctx, paths, e.Stdin, warner(e))
	if errors.As(err, new(model.NoRecordsError)) {
		return nil, cli.CodeError{Code: cli.ExitUsage, Err: err}
	}
	return in, err
}

// inputs returns the positional inputs, stdin when there are none.
func inputs(fs *pflag.FlagSet) []string {
	if fs.NArg() == 0 {
		return []string{"-"}
	}
	return fs.Args()
}
