package main

import (
	"context"
	"path/filepath"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/report"
)

type reportConfig struct {
	inputs []string
	output string
	title  string
}

func (c reportConfig) validate() error {
	if c.output == "" {
		return cli.Usagef("report: -o/--output must not be empty (use - for stdout)")
	}
	return validateInputs("report", c.inputs)
}

// validateInputs rejects reading stdin twice.
func validateInputs(sub string, in []string) error {
	n := 0
	for _, p := range in {
		if p == "-" {
			n++
		}
	}
	if n > 1 {
		return cli.Usagef("%s: \"-\" (stdin) may be given only once", sub)
	}
	return nil
}

const reportUsage = `Usage: aggregate report [FLAGS] DIR...

Walks each DIR recursively for *.json and *.jsonl files (a file may be given
directly; "-" or no DIR reads a stream of JSON records from stdin), reads every
idpbench record by its "schema" field (idpbench.step/v1, idpbench.meta/v1,
idpbench.coldstart/v1, idpbench.sample/v1), and writes COMPARISON.md: the
steady-state table (scenario x product), every connection ladder, how to read
the numbers, and the fairness and limitations appendix. Files that are not
idpbench records are skipped with a warning; another major schema version is
an error naming the file. Steps labelled phase=gcjitter (or any phase but
ladder) are not part of a ladder. The output file appears only when complete.
`

const reportExample = `  scripts/ladder.sh hydra discovery && aggregate report results/latest -o results/latest/COMPARISON.md
`

func runReport(ctx context.Context, args []string, e env) error {
	var c reportConfig
	fs := newFlagSet("report")
	fs.StringVarP(&c.output, "output", "o", "-", "write the Markdown to `FILE`, atomically (links to step files are relative to its directory); - = stdout")
	fs.StringVar(&c.title, "title", report.DefaultTitle, "the report's `TITLE` (first heading)")
	if err := parse(fs, args, reportUsage, reportExample, e); err != nil {
		return err
	}
	c.inputs = inputs(fs)
	if err := c.validate(); err != nil {
		return err
	}
	in, err := report.Load(ctx, c.inputs, e.stdin, e.warn)
	if err != nil {
		return err
	}
	r := report.Build(in, report.Options{Title: c.title, ToolVersion: cli.Version()})
	out, err := atomicfile.Create(c.output, 0o644, e.stdout)
	if err != nil {
		return err
	}
	if err := report.WriteMarkdown(out, r, report.MarkdownOptions{LinkBase: linkBase(c.output)}); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// linkBase is the directory the report's links are relative to.
func linkBase(output string) string {
	if output == "-" {
		return "."
	}
	return filepath.Dir(output)
}
