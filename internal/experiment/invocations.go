package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// Invocations is the invocation pilot (docs/design-methodology.md, "Invocations"): K
// fresh runs of the run tool, each its own PostgreSQL and a fresh start of
// every product (so every invocation starts alike), measuring one scenario
// at one connection count in N windows per product (the full profile's
// warmup rule before each); then per product the variance of ln qps split
// into its part between invocations and within one, the windows per
// invocation that split calls for, and the capacity's interval over the
// windows alone against the one over invocations (DIR/PILOT.md,
// DIR/windows.tsv).
type Invocations struct {
	Products    []string
	Scenario    string
	Connections int
	Invocations int    // K
	Windows     int    // N per invocation
	Out         string // DIR; "" = IDPBENCH_ROOT/results/invocations/SCENARIO-cC
}

// Validate checks the configuration; its errors are usage errors.
func (v Invocations) Validate() error {
	switch {
	case len(v.Products) == 0 || slices.Contains(v.Products, ""):
		return cli.Usagef("--products wants product names, comma-separated")
	case v.Scenario == "":
		return cli.Usagef("--scenario wants a scenario name")
	case v.Connections < 1:
		return cli.Usagef("--connections wants a positive number (got %d)", v.Connections)
	case v.Invocations < 2:
		return cli.Usagef("--invocations wants 2 or more (got %d): one invocation has no variance between invocations", v.Invocations)
	case v.Windows < 2:
		return cli.Usagef("--windows wants 2 or more (got %d): one window has no variance within an invocation", v.Windows)
	}
	return nil
}

// Run runs the invocations not finished before (a run whose every product
// has a meta.json is kept), analyses them and prints PILOT.md on stdout.
func (v Invocations) Run(ctx context.Context, e Env) error {
	bin, out, runs, err := e.dirs(v.Out, func(root string) string {
		return filepath.Join(root, "results", "invocations", fmt.Sprintf("%s-c%d", v.Scenario, v.Connections))
	})
	if err != nil {
		return err
	}
	vars := []string{"IDPBENCH_RESULTS=" + runs, "IDPBENCH_SCENARIOS=" + v.Scenario, "IDPBENCH_LADDER=" + strconv.Itoa(v.Connections),
		"IDPBENCH_BUDGET_S=0", "IDPBENCH_SHARES=none", "IDPBENCH_AA=none",
		"IDPBENCH_GCJITTER_S=" + e.getenvOr("IDPBENCH_GCJITTER_S", "5")}
	for i := 1; i <= v.Invocations; i++ {
		id := invocationID(i)
		if v.finished(filepath.Join(runs, id)) {
			e.Log.Printf("invocation %d/%d: %s finished before, kept", i, v.Invocations, id)
			continue
		}
		e.Log.Printf("invocation %d/%d: %s, %s at c=%d, %d windows each (log: %s)", i, v.Invocations,
			strings.Join(v.Products, " "), v.Scenario, v.Connections, v.Windows, filepath.Join(runs, id+".log"))
		args := []string{"--only", strings.Join(v.Products, ","), "--repeats", strconv.Itoa(v.Windows), "--run-id", id}
		if err := runTool(ctx, e, bin, filepath.Join(runs, id+".log"), args, vars); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("invocation %d failed (log: %s): %w", i, filepath.Join(runs, id+".log"), err)
		}
	}
	return v.analyse(ctx, e, out)
}

func invocationID(i int) string { return fmt.Sprintf("inv-%d", i) }

// finished reports whether every product of run directory dir has its meta.json.
func (v Invocations) finished(dir string) bool {
	for _, p := range v.Products {
		if _, err := os.Stat(filepath.Join(dir, p, "meta.json")); err != nil {
			return false
		}
	}
	return true
}

// Window is one measured window of the pilot.
type Window struct {
	Product    string
	Invocation int
	Round      int     // the window's place in its invocation, from 1
	QPS        float64 // its throughput (requests or iterations per second)
	ProbeUS    float64 // its host probe (µs; 0: none)
	CostS      float64 // its warmup and window, seconds
	Unsettled  bool    // its warmup ended without meeting the rule (warmup_stable false)
}

// analyse writes DIR/windows.tsv and DIR/PILOT.md from the invocations'
// run directories and prints PILOT.md.
func (v Invocations) analyse(ctx context.Context, e Env, out string) error {
	var windows []Window
	invocationS := map[string][]float64{} // per product, each invocation's cost outside its windows
	for i := 1; i <= v.Invocations; i++ {
		dir := filepath.Join(out, "runs", invocationID(i))
		in, err := model.Load(ctx, []string{dir}, nil, func(msg string) { e.Log.Printf("warning: %s", msg) })
		if err != nil {
			return fmt.Errorf("reading invocation %d: %w", i, err)
		}
		ws := v.windowsOf(model.Build(in, model.Options{}), i)
		windows = append(windows, ws...)
		for p, s := range startCosts(in.Phases, v.Products) {
			invocationS[p] = append(invocationS[p], s)
		}
	}
	var tsv strings.Builder
	tsv.WriteString("product\tinvocation\twindow\tqps\tprobe_us\tcost_s\tunsettled\n")
	for _, w := range windows {
		fmt.Fprintf(&tsv, "%s\t%d\t%d\t%s\t%s\t%s\t%t\n", w.Product, w.Invocation, w.Round, jsonNum(w.QPS), jsonNum(w.ProbeUS), jsonNum(math.Round(w.CostS*10)/10), w.Unsettled)
	}
	if err := atomicfile.Write(filepath.Join(out, "windows.tsv"), 0o644, []byte(tsv.String()), nil); err != nil {
		return err
	}
	var md bytes.Buffer
	v.writePilot(&md, windows, invocationS)
	if err := atomicfile.Write(filepath.Join(out, "PILOT.md"), 0o644, md.Bytes(), nil); err != nil {
		return err
	}
	e.Log.Printf("pilot: %s; windows: %s", filepath.Join(out, "PILOT.md"), filepath.Join(out, "windows.tsv"))
	_, err := e.Stdout.Write(md.Bytes())
	return err
}

// windowsOf is the windows of invocation i at the pilot's level, per
// product, in time order.
func (v Invocations) windowsOf(r *model.Report, i int) []Window {
	var out []Window
	for _, c := range r.Cells {
		if c.Scenario.Name != v.Scenario || !slices.Contains(v.Products, c.Product) {
			continue
		}
		for _, l := range c.Levels {
			if l.Connections != v.Connections || l.RateRPS != 0 {
				continue
			}
			for k, si := range l.Steps {
				st := c.Ladder[si].Step
				out = append(out, Window{Product: c.Product, Invocation: i, Round: k + 1, QPS: st.QPS, ProbeUS: l.Probes[k],
					CostS: st.WarmupS + st.DurationS, Unsettled: st.WarmupStable != nil && !*st.WarmupStable})
			}
		}
	}
	return out
}

// startCosts is each product's cost of one invocation outside its
// windows: its install, cold starts, setup and teardown, and an equal
// share of the run-wide phases (the database up and down, the build).
func startCosts(files []model.PhaseFile, products []string) map[string]float64 {
	own := map[string]float64{}
	shared := 0.0
	for _, f := range files {
		for _, ph := range f.Phases {
			switch ph.Kind {
			case schema.PhaseKindInstall, schema.PhaseKindColdstart, schema.PhaseKindSetup, schema.PhaseKindTeardown:
				own[ph.Product] += ph.Seconds
			case schema.PhaseKindDatabase, schema.PhaseKindBuild:
				shared += ph.Seconds
			}
		}
	}
	costs := map[string]float64{}
	for _, p := range products {
		costs[p] = own[p] + shared/float64(len(products))
	}
	return costs
}

// writePilot writes PILOT.md: per product, the variance components of ln
// qps (and of the host probe's ln, to tell the machine's share), the two
// intervals and the windows per invocation they call for.
func (v Invocations) writePilot(w *bytes.Buffer, windows []Window, invocationS map[string][]float64) {
	fmt.Fprintf(w, "# Invocation pilot: %s at c=%d\n\n", v.Scenario, v.Connections)
	fmt.Fprintf(w, "%d fresh invocations (runs of the run tool: their own PostgreSQL, every product started fresh), "+
		"each measuring %s at c=%d in %d windows per product after the full profile's warmup rule; products %s. "+
		"Repeat with:\n\n    scripts/invocation-pilot.sh --products %s --scenario %s --connections %d --invocations %d --windows %d\n\n",
		v.Invocations, v.Scenario, v.Connections, v.Windows, strings.Join(v.Products, ", "),
		strings.Join(v.Products, ","), v.Scenario, v.Connections, v.Invocations, v.Windows)
	fmt.Fprintf(w, "Within and between are the variance components of ln qps (a one-way random-effects ANOVA over the "+
		"invocations), shown as the relative standard deviation each adds; p is the F test of \"no invocation effect\". "+
		"The host probe's own between-invocation part says how much of it the machine's speed explains. The interval over "+
		"windows treats every window as independent (as the report does); the one over invocations resamples the "+
		"invocations, then their windows (a hierarchical bootstrap). Windows per invocation is Kalibera & Jones's rule, "+
		"√(invocation cost / window cost × within / between): – where no between component shows.\n\n")
	fmt.Fprintf(w, "| Product | invocations × windows | median | within | between | p | probe between | 95%% over windows | 95%% over invocations | invocation / window cost | windows per invocation | unsettled windows |\n")
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range v.Products {
		fmt.Fprintf(w, "%s\n", v.pilotRow(p, windows, invocationS[p]))
	}
	fmt.Fprintf(w, "\nThe windows, one a line: windows.tsv.\n")
}

// pilotRow is product p's row of PILOT.md.
func (v Invocations) pilotRow(p string, windows []Window, invocationS []float64) string {
	groups, probes := make([][]float64, v.Invocations), make([][]float64, v.Invocations)
	var all []float64
	var costs []float64
	unsettled, n := 0, 0
	for _, win := range windows {
		if win.Product != p {
			continue
		}
		n++
		groups[win.Invocation-1] = append(groups[win.Invocation-1], win.QPS)
		if win.ProbeUS > 0 {
			probes[win.Invocation-1] = append(probes[win.Invocation-1], win.ProbeUS)
		}
		all, costs = append(all, win.QPS), append(costs, win.CostS)
		if win.Unsettled {
			unsettled++
		}
	}
	comps, err := VarianceComponents(groups)
	if err != nil {
		return fmt.Sprintf("| %s | %d windows | N/A: %v | | | | | | | | | %d |", p, n, err, unsettled)
	}
	probeBetween := "N/A"
	if pc, err := VarianceComponents(probes); err == nil && pc.Windows == n {
		probeBetween = relSD(pc.Between)
	}
	med, _ := stats.Median(all)
	flat := model.MedianInterval(all)
	hier := HierarchicalInterval(groups, p)
	winS, _ := stats.Median(costs)
	invS, _ := stats.Median(invocationS)
	opt := "–"
	if k := OptimalWindows(comps, invS, winS); k > 0 {
		opt = strconv.Itoa(k)
	}
	return fmt.Sprintf("| %s | %d × %s | %s | %s | %s | %s | %s | %s | %s | %.0f s / %.0f s | %s | %d |", p, comps.Invocations,
		perInvocation(groups), steps.FormatQPS(med), relSD(comps.Within), relSD(comps.Between), pValue(comps.P), probeBetween,
		halfText(flat), halfText(hier), invS, winS, opt, unsettled)
}

// perInvocation is the windows per invocation: "4", or "3-4" when they differ.
func perInvocation(groups [][]float64) string {
	lo, hi := math.MaxInt, 0
	for _, g := range groups {
		if len(g) > 0 {
			lo, hi = min(lo, len(g)), max(hi, len(g))
		}
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// relSD is a variance of ln qps as the relative standard deviation it adds.
func relSD(variance float64) string { return fmt.Sprintf("%.1f%%", 100*math.Sqrt(variance)) }

func pValue(p float64) string {
	if math.IsNaN(p) {
		return "N/A"
	}
	return fmt.Sprintf("%.3g", p)
}

// halfText is an interval's ends as distances from its center, "-3.8%
// +8.7%" (an interval of a median need not be symmetric), or why there is
// none.
func halfText(iv model.Interval) string {
	if !iv.OK() {
		return "N/A: " + iv.NA
	}
	return fmt.Sprintf("%+.1f%% %+.1f%%", 100*(iv.Lo/iv.Center-1), 100*(iv.Hi/iv.Center-1))
}
