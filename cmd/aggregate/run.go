package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
)

const toolName = "aggregate"

// subcommand is one of aggregate's verbs.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, env env) error
}

// env is the process's streams, passed instead of touching os.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// warn prints a warning on stderr.
func (e env) warn(msg string) {
	fmt.Fprintf(e.stderr, "%s: warning: %s\n", toolName, msg)
}

func subcommands() []subcommand {
	return []subcommand{
		{"report", "results -> COMPARISON.md", runReport},
		{"merge", "merge the step files of several agents into one exact step", runMerge},
		{"summary", "one line per step (text, csv or json lines) for shell pipes", runSummary},
		{"steady", "the main table as JSON lines: steady-state figures or the N/A reason", runSteady},
		{"compare", "OLD vs NEW: each cell's change and whether it is significant; a regression gate", runCompare},
		{"phase", "append one phase record (run-comparison.sh's wall-time record) to a phases file", runPhase},
		{"ladder", "knee | candidates | pool-size: where round 1 of a ladder stops; which levels later rounds repeat; a step's pool size", runLadder},
		{"efficiency", "one step's requests per CPU-second from a sampler's records (JSON)", runEfficiency},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr}
	err := dispatch(ctx, args, e)
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return cli.ExitOK
	default:
		fmt.Fprintf(stderr, "%s: %v\n", toolName, err)
	}
	return cli.ExitCode(err)
}

func dispatch(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return cli.Usagef("a subcommand is required: report, merge, summary, steady, compare, ladder or efficiency (see '%s --help')", toolName)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, topUsage())
		return nil
	case "--version", "version":
		fmt.Fprintf(e.stdout, "%s %s\n", toolName, cli.Version())
		return nil
	}
	for _, sc := range subcommands() {
		if sc.name == args[0] {
			return sc.run(ctx, args[1:], e)
		}
	}
	return cli.Usagef("unknown subcommand %q (want report, merge, summary, steady, compare, ladder or efficiency)", args[0])
}

func topUsage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s SUBCOMMAND [FLAGS] [INPUT...]\n\n", toolName)
	b.WriteString("Reads idpbench result records (step, meta, coldstart, sample JSON) and writes\n")
	b.WriteString("reports. Inputs are files or directories; \"-\" (or no input) reads stdin.\n\nSubcommands:\n")
	for _, sc := range subcommands() {
		fmt.Fprintf(&b, "  %-10s %s\n", sc.name, sc.summary)
	}
	b.WriteString("\nFlags:\n  -h, --help     this help; '" + toolName + " SUBCOMMAND --help' explains its flags\n")
	b.WriteString("      --version  print the build's version and exit\n")
	b.WriteString("\nExit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted ('compare --help'\nhas its own: 1 is a regression there).\n\nExamples:\n")
	b.WriteString("  scripts/ladder.sh hydra discovery && aggregate report results/latest -o results/latest/COMPARISON.md\n")
	b.WriteString("  aggregate merge agent-*.json | aggregate summary -\n")
	b.WriteString("  aggregate compare --fail-on 'qps<-5%,p99>+10%' results/base results/pr\n")
	b.WriteString("  aggregate ladder knee --dir results/latest/hydra --scenario discovery --ladder \"2 4 8 16 32 64 128\"\n")
	return b.String()
}

// newFlagSet returns a flag set whose errors come back as usage errors and
// whose help is printed by parse.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parse parses args; on --help it prints usage and the flag defaults to stdout.
func parse(fs *pflag.FlagSet, args []string, usage, example string, e env) error {
	fs.BoolP("help", "h", false, "print this help and exit")
	fs.Bool("version", false, "print the build's version and exit")
	_ = fs.MarkHidden("help") // listed by printHelp, without pflag's [=true|false]
	_ = fs.MarkHidden("version")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		printHelp(fs, usage, example, e.stdout)
		return err
	case err != nil:
		return cli.Usagef("%s: %v (see '%s %s --help')", fs.Name(), err, toolName, fs.Name())
	}
	if v, _ := fs.GetBool("help"); v {
		printHelp(fs, usage, example, e.stdout)
		return pflag.ErrHelp
	}
	if v, _ := fs.GetBool("version"); v {
		fmt.Fprintf(e.stdout, "%s %s\n", toolName, cli.Version())
		return pflag.ErrHelp
	}
	return nil
}

// printHelp prints usage, the flags and the example; the exit statuses
// every subcommand shares unless usage states its own ("Exit status:").
func printHelp(fs *pflag.FlagSet, usage, example string, w io.Writer) {
	exits := "\nExit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted.\n"
	if strings.Contains(usage, "\nExit status:") {
		exits = ""
	}
	fmt.Fprintf(w, "%s\nFlags:\n%s  -h, --help     print this help and exit\n      --version  print the build's version and exit\n%s\nExample:\n%s",
		usage, fs.FlagUsages(), exits, example)
}

// inputs returns the positional inputs, stdin when there are none.
func inputs(fs *pflag.FlagSet) []string {
	if fs.NArg() == 0 {
		return []string{"-"}
	}
	return fs.Args()
}
