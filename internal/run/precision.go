package run

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/report"
)

// plan decides round ROUND (> 1) for every open product at once: the
// scenarios each measures again (every scenario in a fixed round, those
// wide finds in a precision round), or nothing, which closes them all,
// when the budget cannot hold the round: the session's elapsed time plus
// the round's cost (each product's windows to measure, roundWindows, at
// its seconds per window so far) plus what closing every open product
// still costs (its windows at shares, GC-jitter run and teardown:
// closeReserveS) would pass Precision.BudgetS. One decision for every
// product, so that no product gets a round another does not for want of
// time (docs/design.md, "The hour's budget"). Each decision is logged.
func (r *runner) plan(ctx context.Context, round int, products []string) (plan map[string][]string, closeAll bool) {
	plan = map[string][]string{}
	est, windows := 0.0, 0
	for _, p := range products {
		if r.out[p] || r.closed[p] {
			continue
		}
		scenarios := r.Scenarios
		if round > r.Repeats {
			scenarios = r.wide(ctx, p, round)
		}
		plan[p] = scenarios
		n := r.roundWindows(p, scenarios)
		windows += n
		est += float64(n) * r.perWindowS(p)
	}
	b := r.Precision.BudgetS
	if b <= 0 || windows == 0 {
		return plan, false
	}
	kind := "round"
	if round > r.Repeats {
		kind = "precision round"
	}
	elapsed := r.env.Now().Sub(r.env.Started).Seconds()
	reserve := r.closeReserveS(ctx)
	sum := fmt.Sprintf("%d s elapsed + %d s (its %d windows at each product's seconds per window so far) + %d s (closing %d products: shares, GC jitter, down)",
		int(elapsed), int(est), windows, int(reserve), int(r.open()))
	if elapsed+est+reserve > float64(b) {
		r.log.Printf("%s %d not started for any product: %s > the budget of %d s (IDPBENCH_BUDGET_S): every product closes now", kind, round, sum, b)
		return nil, true
	}
	r.log.Printf("%s %d fits the budget: %s <= %d s (IDPBENCH_BUDGET_S)", kind, round, sum, b)
	return plan, false
}

// roundWindows is how many windows product p's ladders of scenarios
// measure in a round after the first: their candidate levels (one window
// each), as the ladders will decide them from round 1's records; a
// scenario without them (N/A, no knee record) measures none.
func (r *runner) roundWindows(p string, scenarios []string) int {
	n := 0
	for _, s := range scenarios {
		if k, err := ladder.DecideCandidates(filepath.Join(r.runDir, p), s); err == nil {
			n += len(k.Candidates)
		}
	}
	return n
}

// perWindowS is what one ladder window of product p has cost in this
// session so far, seconds (its ladders' time over their windows: warmup,
// window, pools and health checks); 0 before its first.
func (r *runner) perWindowS(p string) float64 {
	if r.ladderN[p] == 0 {
		return 0
	}
	return r.ladderS[p] / float64(r.ladderN[p])
}

// wide returns the scenarios of product p that precision round round
// measures again: those whose capacity (report.Capacity, the figure the
// main table leads with) has no 95% interval yet or one wider than
// ±Precision.Pct of its median. Each decision is logged; whether the
// round fits the budget is plan's.
func (r *runner) wide(ctx context.Context, p string, round int) []string {
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
