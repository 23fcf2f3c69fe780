package run

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/report"
)

// wide returns the scenarios of product p that precision round round
// measures again: those whose capacity (report.Capacity, the figure the
// main table leads with) has no 95% interval yet or one wider than
// ±Precision.Pct of its median. None when the budget cannot hold the
// product's round: the session's elapsed time plus the product's last
// round plus what closing every open product still costs (its windows at
// shares, GC-jitter run and teardown: closeReserveS) would pass
// Precision.BudgetS.
// Each decision is logged.
func (r *runner) wide(ctx context.Context, p string, round int) []string {
	if b := r.Precision.BudgetS; b > 0 {
		elapsed := r.env.Now().Sub(r.env.Started).Seconds()
		reserve := r.closeReserveS(ctx)
		if elapsed+r.roundS[p]+reserve > float64(b) {
			r.log.Printf("%s: precision round %d not started: %d s elapsed + %d s (its last round) + %d s (closing %d products: shares, GC jitter, down) > the budget of %d s (IDPBENCH_BUDGET_S)",
				p, round, int(elapsed), int(r.roundS[p]), int(reserve), int(r.open()), b)
			return nil
		}
	}
	in, err := report.Load(ctx, []string{filepath.Join(r.runDir, p)}, nil, func(string) {})
	if err != nil {
		r.log.Printf("%s: precision round %d not started: reading its records: %v", p, round, err)
		return nil
	}
	widths := CapacityWidths(report.Build(in, report.Options{}), p)
	var out, said []string
	for _, s := range r.Scenarios {
		w, ok := widths[s]
		switch {
		case !ok:
			continue // no steady state: nothing a later round repeats
		case w.OK() && w.HalfPct() <= r.Precision.Pct:
			said = append(said, fmt.Sprintf("%s ±%.1f%% (%d windows)", s, w.HalfPct(), w.N))
		case w.OK():
			out = append(out, s)
			said = append(said, fmt.Sprintf("%s ±%.1f%% (%d windows): again", s, w.HalfPct(), w.N))
		default:
			out = append(out, s)
			said = append(said, fmt.Sprintf("%s %s: again", s, w.NA))
		}
	}
	r.log.Printf("%s: precision round %d (capacity intervals within ±%g%% are done): %s", p, round, r.Precision.Pct, orNone(strings.Join(said, "; ")))
	return out
}

// closeReserveS is what closing every open product still costs, seconds:
// each one's windows at shares of capacity (one cell's cost,
// ladder.ShareSettings.CostS, for each of its cells with a steady state so
// far, the cells RunShares will measure), its GC-jitter window
// (IDPBENCH_GCJITTER_S, else 60 s) and 40 s for its warmup, pool, meta and
// down.
func (r *runner) closeReserveS(ctx context.Context) float64 {
	d := 60
	if v, ok := ladder.Whole(r.env.Getenv("IDPBENCH_GCJITTER_S")); ok {
		d = v
	}
	total := 0.0
	for _, p := range r.Products {
		if r.out[p] || r.closed[p] {
			continue
		}
		total += float64(d + 40 + r.steadyCells(ctx, p)*r.Shares.CostS())
	}
	return total
}

// steadyCells is how many of product p's cells have a steady state in its
// records so far; every scenario of the run when they cannot be read.
func (r *runner) steadyCells(ctx context.Context, p string) int {
	in, err := report.Load(ctx, []string{filepath.Join(r.runDir, p)}, nil, func(string) {})
	if err != nil {
		return len(r.Scenarios)
	}
	return len(CapacityWidths(report.Build(in, report.Options{}), p))
}

// open is the number of products still up for a later round.
func (r *runner) open() float64 {
	n := 0
	for _, p := range r.Products {
		if !r.out[p] && !r.closed[p] {
			n++
		}
	}
	return float64(n)
}

// CapacityWidths is each steady cell's headline capacity of product p in
// rep, by scenario.
func CapacityWidths(rep *report.Report, p string) map[string]report.Interval {
	out := map[string]report.Interval{}
	for _, c := range rep.Cells {
		if c.Product == p && c.SteadyLevel >= 0 {
			out[c.Scenario.Name] = c.Capacity.Headline()
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "no steady cell"
	}
	return s
}
