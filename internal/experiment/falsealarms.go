package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/compare"
)

// FalseAlarms counts how often the compare engine calls an unchanged
// target changed: 2N quick runs of the generic oidc adapter back to back,
// run 2i-1 compared with run 2i, the cells flagged significant counted per
// sample unit (DIR/summary.txt). Nothing changed between the runs, so every
// flag is a false alarm.
type FalseAlarms struct {
	Pairs   int    // pairs of runs
	Repeats int    // windows per ladder step
	Out     string // DIR; "" = IDPBENCH_ROOT/results/false-alarms/<UTC date>
	Now     func() time.Time
}

// Units are the sample units counted, in summary order.
var Units = []string{compare.UnitWindow, compare.UnitInterval}

// Validate checks the configuration; its errors are usage errors.
func (f FalseAlarms) Validate() error {
	switch {
	case f.Pairs < 1:
		return cli.Usagef("--pairs wants a positive number (got %d)", f.Pairs)
	case f.Repeats < 1:
		return cli.Usagef("--repeats wants a positive number (got %d)", f.Repeats)
	}
	return nil
}

// ErrRunFailed ends an experiment that finished with a run or a
// comparison failed (exit 1, after the summary).
var ErrRunFailed = errors.New("a run or a comparison failed (see above)")

// Run runs the runs not finished before (a run whose meta.json exists is
// kept), compares each pair, writes the comparisons and summary.txt and
// prints the summary on stdout.
func (f FalseAlarms) Run(ctx context.Context, e Env) error {
	now := f.Now
	if now == nil {
		now = time.Now
	}
	bin, out, runs, err := e.dirs(f.Out, func(root string) string {
		return filepath.Join(root, "results", "false-alarms", now().UTC().Format("20060102-1504"))
	})
	if err != nil {
		return err
	}
	scenarios := e.getenvOr("IDPBENCH_SCENARIOS", "discovery client_credentials introspect userinfo")
	ladder := e.getenvOr("IDPBENCH_LADDER", "8")
	vars := []string{"IDPBENCH_RESULTS=" + runs, "IDPBENCH_SCENARIOS=" + scenarios, "IDPBENCH_LADDER=" + ladder,
		"IDPBENCH_GCJITTER_S=" + e.getenvOr("IDPBENCH_GCJITTER_S", "5")}
	failed, err := f.runAll(ctx, e, bin, runs, vars, scenarios, ladder)
	if err != nil {
		return err
	}
	var sum bytes.Buffer
	fmt.Fprintf(&sum, "false alarms of aggregate compare: %d pairs of back-to-back runs of one unchanged target\n", f.Pairs)
	fmt.Fprintf(&sum, "target: %s; scenarios: %s; ladder: %s; windows per step: %d; quick profile\n",
		e.getenvOr("IDPBENCH_OIDC_CONFIG", "examples/oidc/refop.env"), scenarios, ladder, f.Repeats)
	fmt.Fprintf(&sum, "tool: experiment %s\n\n", cli.Version())
	pairs, err := f.comparePairs(ctx, runs, out, &sum)
	if err != nil {
		return err
	}
	for _, unit := range Units {
		sum.WriteString(Tally(unit, pairs[unit]))
		failed = failed || len(pairs[unit]) < f.Pairs
	}
	if err := atomicfile.Write(filepath.Join(out, "summary.txt"), 0o644, sum.Bytes(), nil); err != nil {
		return err
	}
	if _, err := e.Stdout.Write(sum.Bytes()); err != nil {
		return err
	}
	if failed {
		return cli.CodeError{Code: cli.ExitRuntime, Err: ErrRunFailed}
	}
	return nil
}

// runAll runs the runs not finished before; failed says whether one failed
// (the others still run). Only an interrupt ends it early.
func (f FalseAlarms) runAll(ctx context.Context, e Env, bin, runs string, vars []string, scenarios, ladder string) (failed bool, err error) {
	for i := 1; i <= 2*f.Pairs; i++ {
		e.Log.Printf("[step %d/%d] run %d: scenarios %s, ladder %s, %d windows each", i, 2*f.Pairs, i, scenarios, ladder, f.Repeats)
		id := "run-" + strconv.Itoa(i)
		if finished(filepath.Join(runs, id)) {
			e.Log.Printf("run %d: finished before (its meta.json exists), kept", i)
			continue
		}
		logPath := filepath.Join(runs, id+".log")
		args := []string{"--quick", "--only", "oidc", "--repeats", strconv.Itoa(f.Repeats), "--run-id", id}
		if err := runTool(ctx, e, bin, logPath, args, vars); err != nil {
			if errors.Is(err, context.Canceled) {
				return failed, err
			}
			e.Log.Printf("run %d failed (log: %s): %v", i, logPath, err)
			failed = true
		}
	}
	return failed, nil
}

// finished: the run directory holds the oidc product's meta.json, which
// the run tool writes when the product's run is complete.
func finished(runDir string) bool {
	fi, err := os.Stat(filepath.Join(runDir, "oidc", "meta.json"))
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// comparePairs compares run 2i-1 with run 2i for every pair and unit,
// writing DIR/pair-<i>.<unit>.tsv and DIR/pair-<i>.md (window samples). A
// pair that cannot be compared is said in sum (and has no files); the
// result holds, per unit, the pairs compared.
func (f FalseAlarms) comparePairs(ctx context.Context, runs, out string, sum *bytes.Buffer) (map[string][]PairRows, error) {
	pairs := map[string][]PairRows{}
	for i := 1; i <= f.Pairs; i++ {
		var warns []string
		warn := func(msg string) { warns = append(warns, msg) }
		old, err1 := loadSide(ctx, filepath.Join(runs, "run-"+strconv.Itoa(2*i-1)), warn)
		new, err2 := loadSide(ctx, filepath.Join(runs, "run-"+strconv.Itoa(2*i)), warn)
		for _, w := range warns {
			fmt.Fprintf(sum, "pair %d: warning: %s\n", i, w)
		}
		if err := errors.Join(err1, err2); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, err
			}
			fmt.Fprintf(sum, "pair %d: compare failed: %s\n", i, strings.ReplaceAll(err.Error(), "\n", "; "))
			for _, name := range pairFiles(i) {
				_ = os.Remove(filepath.Join(out, name)) // a file from an earlier attempt is not this one's
			}
			continue
		}
		for _, unit := range Units {
			res := compareAll(old, new, unit)
			name := fmt.Sprintf("pair-%d.%s.tsv", i, unit)
			if err := writeResult(filepath.Join(out, name), res, compare.FormatTSV); err != nil {
				return nil, err
			}
			if unit == compare.UnitWindow {
				if err := writeResult(filepath.Join(out, fmt.Sprintf("pair-%d.md", i)), res, compare.FormatMarkdown); err != nil {
					return nil, err
				}
			}
			pairs[unit] = append(pairs[unit], PairRows{File: name, Rows: res.Rows})
		}
	}
	return pairs, nil
}

func pairFiles(i int) []string {
	names := []string{fmt.Sprintf("pair-%d.md", i)}
	for _, unit := range Units {
		names = append(names, fmt.Sprintf("pair-%d.%s.tsv", i, unit))
	}
	return names
}

func writeResult(path string, res compare.Result, format string) error {
	var b bytes.Buffer
	if err := compare.Write(&b, res, format); err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, b.Bytes(), nil)
}

// PairRows are one pair's compared rows of one unit and the name of the
// file they were written to in DIR (named in the flagged lines).
type PairRows struct {
	File string
	Rows []compare.Row
}

// Tally is summary.txt's section for one unit: over every pair, a line per
// row whose qps change is significant, the compared rows, and per metric
// (qps, p50, p99) the significant ones with their percentage (rounded to
// a whole percent, 0 when nothing was compared).
func Tally(unit string, pairs []PairRows) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nsamples: one per %s\n", unit)
	rows, sig := 0, [3]int{}
	for _, p := range pairs {
		for _, r := range p.Rows {
			if r.Status != compare.StatusCompared {
				continue
			}
			rows++
			for m, d := range []compare.Delta{r.QPS, r.P50, r.P99} {
				if d.Significant {
					sig[m]++
				}
			}
			if r.QPS.Significant {
				fmt.Fprintf(&b, "  flagged qps: %s %s c=%d %s%% (p=%s)\n", p.File, r.Scenario, r.Connections, tsvNum(r.QPS.Pct), tsvNum(r.QPS.P))
			}
		}
	}
	fmt.Fprintf(&b, "  compared cells: %d\n", rows)
	for m, name := range []string{"qps", "p50", "p99"} {
		pct := 0.0
		if rows > 0 {
			pct = 100 * float64(sig[m]) / float64(rows)
		}
		fmt.Fprintf(&b, "  significant %s: %d of %d (%.0f%%)\n", name, sig[m], rows, pct)
	}
	return b.String()
}

// tsvNum is a number as compare's TSV writes it (empty when not finite).
func tsvNum(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
