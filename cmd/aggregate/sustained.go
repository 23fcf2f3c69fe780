package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/steps"
	"github.com/idpbench/idpbench/internal/sustaincheck"
)

const sustainedUsage = `Usage: aggregate sustained [FLAGS] DIR...

Judges every rate-mode window under DIR again by the sustain rule
(docs/design-methodology.md, "Sustained or not": not sustained when the corrected P50 of
its intervals grew by more than 10 ms a second, Theil-Sen, and the window
ended more than 1% of its length above its lowest interval), from the
window's own intervals -- never from the verdict the run wrote -- and prints
one line per window: product, scenario, share (search: a window of the run's
search below a share not sustained), rate, the verdict, its growth (ms/s)
and end backlog (ms), the run's recorded verdict ("-" in older records), and
the corrected P50 of the first and last interval. Then a summary: the
windows by verdict, how many sustained windows opened no slower than twice
their last interval, how many recorded verdicts differ from the rule's.

With --check-report FILE (a COMPARISON.md of the same run) it also checks the
report against the verdicts: no "P99 at P%" figure of the main table and no
latency of the shares table from a window not sustained (or not judged), no
"not sustained" for one that is, a figure beside "not sustained" taken at a
sustained share, and no recorded verdict other than the rule's. Every
problem is printed; any makes the exit status 1.
`

const sustainedExample = `  aggregate sustained results/latest --check-report results/latest/COMPARISON.md
`

func runSustained(ctx context.Context, args []string, e env) error {
	fs := cli.NewFlagSet("sustained")
	check := fs.String("check-report", "", "a COMPARISON.md of the run to check against the verdicts (`FILE`); default none")
	out := outputFlag(fs, "the windows and problems")
	if err := parse(fs, args, sustainedUsage, sustainedExample, e); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("sustained: no DIR")
	}
	var md []byte
	if *check != "" {
		var err error
		if md, err = os.ReadFile(*check); err != nil {
			return fmt.Errorf("sustained: --check-report: %w", err)
		}
	}
	in, err := load(ctx, fs.Args(), e)
	if err != nil {
		return err
	}
	ws := sustaincheck.Windows(in)
	if len(ws) == 0 {
		return fmt.Errorf("sustained: no rate-mode window under %s", strings.Join(fs.Args(), ", "))
	}
	var probs []string
	err = writeOutput(*out, e, func(w io.Writer) error {
		printWindows(w, ws)
		if *check == "" {
			return nil
		}
		probs = sustaincheck.Problems(string(md), ws)
		for _, p := range probs {
			fmt.Fprintf(w, "problem: %s\n", p)
		}
		if len(probs) == 0 {
			fmt.Fprintf(w, "%s respects the verdicts: no latency from a window not sustained\n", *check)
		}
		return nil
	})
	if err == nil && len(probs) > 0 {
		err = fmt.Errorf("sustained: %s does not respect the sustain rule: %d problems", *check, len(probs))
	}
	return err
}

// printWindows prints each window's line and the summary.
func printWindows(out io.Writer, ws []sustaincheck.Window) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "product\tscenario\tshare\trate/s\tverdict\tgrowth ms/s\tend backlog ms\trecorded\tfirst/last P50 ms")
	for _, w := range ws {
		share := fmt.Sprintf("%d%%", w.Share)
		if w.Search {
			share += " search"
		}
		rec := "-"
		if w.Recorded != nil {
			rec = w.Recorded.Verdict
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f\t%.0f\t%s\t%s / %s\n", w.Product, w.Scenario, share, steps.FormatQPS(w.RateRPS),
			w.Judged.Verdict, w.Judged.GrowthMSPerS, w.Judged.EndBacklogMS, rec, steps.FormatMS(w.FirstP50MS), steps.FormatMS(w.LastP50MS))
	}
	tw.Flush()
	s := sustaincheck.Summarize(ws)
	fmt.Fprintf(out, "%d rate-mode windows: %d sustained, %d not sustained, %d not judged\n", s.Windows, s.Sustained, s.NotSustained, s.NotJudged)
	fmt.Fprintf(out, "sustained windows whose first second's corrected P50 is at most twice their last second's: %d of %d\n", s.OpenedFlat, s.Sustained)
	fmt.Fprintf(out, "recorded verdicts: %d, of which %d differ from the rule's\n", s.Recorded, s.Disagree)
}
