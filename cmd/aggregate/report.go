package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/report"
	"github.com/idpbench/idpbench/products"
)

type reportConfig struct {
	inputs    []string
	output    string
	title     string
	chartsDir string // "" = charts/ next to the output file, none for stdout
}

// chartsSubdir is where the charts go, next to the report, by default.
const chartsSubdir = "charts"

// charts returns the directory the charts are written to, "" for none.
func (c reportConfig) charts() string {
	switch {
	case c.chartsDir != "":
		return c.chartsDir
	case c.output == "-":
		return ""
	}
	return filepath.Join(filepath.Dir(c.output), chartsSubdir)
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
steady-state table (scenario x product); memory (RSS, MiB) of the IdP, its
PostgreSQL and both during the steady-state windows; cold starts A and B; the
GC-jitter P99 spread; per product the database figures, top queries and a
bottleneck verdict; every connection ladder; how to read the numbers; and the
fairness and limitations appendix. Files found in a directory that are not
idpbench records are skipped with a warning; a DIR or FILE named on the
command line that holds none is bad input (exit 2), and another major schema
version an error, each naming it. Steps labelled phase=gcjitter (or any phase but ladder) are not part of
a ladder. The output file appears only when complete.

Charts (SVG: QPS and P99 against connections per scenario, P99 over time of
the GC-jitter runs) go to the charts/ directory next to the -o file, each
written atomically, and the report embeds them with relative links. With
-o - no charts are written unless --charts-dir is given.
`

const reportExample = `  scripts/ladder.sh hydra discovery && aggregate report results/latest -o results/latest/COMPARISON.md
`

func runReport(ctx context.Context, args []string, e env) error {
	var c reportConfig
	fs := cli.NewFlagSet("report")
	fs.StringVarP(&c.output, "output", "o", "-", "write the Markdown to `FILE`, atomically (links to step files are relative to its directory); - = stdout")
	fs.StringVar(&c.title, "title", model.DefaultTitle, "the report's `TITLE` (first heading)")
	fs.StringVar(&c.chartsDir, "charts-dir", "", "write the SVG charts into `DIR` (default: charts/ next to the -o file; none with -o -)")
	if err := parse(fs, args, reportUsage, reportExample, e); err != nil {
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
	r := model.Build(in, model.Options{Title: c.title, ToolVersion: cli.Version(), ServerMetrics: products.ServerMetrics, References: products.References()})
	charts := c.charts()
	if charts == "" {
		fmt.Fprintf(e.Stderr, "%s: charts not written: the report goes to stdout (give --charts-dir DIR to write them)\n", toolName)
	} else if err := report.WriteCharts(charts, r); err != nil {
		return err
	}
	mo := report.MarkdownOptions{LinkBase: linkBase(c.output), ChartsDir: charts}
	return writeOutput(c.output, e, func(w io.Writer) error { return report.WriteMarkdown(w, r, mo) })
}

// linkBase is the directory the report's links are relative to.
func linkBase(output string) string {
	if output == "-" {
		return "."
	}
	return filepath.Dir(output)
}
