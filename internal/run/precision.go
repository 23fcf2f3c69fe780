package run

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/report"
	"github.com/idpbench/idpbench/internal/steps"
)

// plan decides round ROUND (> 1) for every open product at once: the
// scenarios each measures again (every scenario in a fixed round, those
// wide finds in a precision round), kept only as far as the budget holds
// them, and the same for every product. A scenario's cost is every open
// product's windows in it (the candidate levels its ladder will repeat,
// one window each) at that product's seconds per later window
// (laterWindowS); in the round's drawn order of the scenarios each is kept
// while the session's elapsed time plus the kept scenarios' cost plus what
// closing every open product still costs (its windows at shares, GC-jitter
// run and teardown: closeReserveS) stays within Precision.BudgetS, and one
// that would pass it is left out for every product. A round that keeps no
// window closes every product (closeAll). So a product never gets a window
// another does not for want of time: within a scenario, every product has
// the same rounds (docs/design.md, "The hour's budget"). Each decision is
// logged.
func (r *runner) plan(ctx context.Context, round int, products []string) (plan map[string][]string, closeAll bool) {
	plan = map[string][]string{}
	var open []string
	for _, p := range products {
		if r.out[p] || r.closed[p] {
			continue
		}
		open = append(open, p)
		plan[p] = r.Scenarios
		if round > r.Repeats {
			plan[p] = r.wide(ctx, p, round)
		}
	}
	b := r.Precision.BudgetS
	if b <= 0 {
		return plan, false
	}
	cost, windows := map[string]float64{}, map[string]int{}
	for _, p := range open {
		per := r.laterWindowS(p)
		for _, s := range plan[p] {
			n := r.candidateWindows(p, s)
			windows[s] += n
			cost[s] += float64(n) * per
		}
	}
	kind := "round"
	if round > r.Repeats {
		kind = "precision round"
	}
	elapsed := r.env.Now().Sub(r.env.Started).Seconds()
	reserve := r.closeReserveS(ctx)
	spent, n := 0.0, 0
	var kept, left []string
	for _, s := range r.Order.Of(round, budgetOrder, r.Scenarios) {
		switch {
		case windows[s] == 0:
		case elapsed+spent+cost[s]+reserve <= float64(b):
			kept, spent, n = append(kept, s), spent+cost[s], n+windows[s]
		default:
			left = append(left, fmt.Sprintf("%s (%d windows, %d s)", s, windows[s], int(cost[s])))
		}
	}
	sum := fmt.Sprintf("%d s elapsed + %d s (its %d windows at each product's seconds per window) + %d s (closing %d products: shares, GC jitter, down)",
		int(elapsed), int(spent), n, int(reserve), len(open))
	if n == 0 && len(left) > 0 {
		r.log.Printf("%s %d not started for any product: %s with any of %s > the budget of %d s (IDPBENCH_BUDGET_S): every product closes now",
			kind, round, sum, strings.Join(left, ", "), b)
		return nil, true
	}
	if len(left) > 0 {
		r.log.Printf("%s %d measures %s for every product: %s <= %d s (IDPBENCH_BUDGET_S); left out for every product, over the budget: %s",
			kind, round, strings.Join(kept, " "), sum, b, strings.Join(left, ", "))
	} else if n > 0 {
		r.log.Printf("%s %d fits the budget: %s <= %d s (IDPBENCH_BUDGET_S)", kind, round, sum, b)
	}
	for _, p := range open {
		var in []string
		for _, s := range plan[p] {
			if slices.Contains(kept, s) {
				in = append(in, s)
			}
		}
		plan[p] = in
	}
	return plan, false
}

// budgetOrder is what Order.Of draws the order of the scenarios the budget
// keeps for (no product's name: those have no parentheses).
const budgetOrder = "(budget)"

// candidateWindows is how many windows product p's ladder of scenario s
// measures in a round after the first: its candidate levels, one window
// each, as the ladder will decide them from round 1's records; none for a
// scenario without them (N/A, no knee record).
func (r *runner) candidateWindows(p, s string) int {
	k, err := ladder.DecideCandidates(filepath.Join(r.runDir, p), s)
	if err != nil {
		return 0
	}
	return len(k.Candidates)
}

// laterWindowS is what one ladder window of product p is expected to cost
// in a round after the first, seconds: the median warmup and window of its
// round-1 steps (a later round's warmup is a warm product's, not the long
// one of a JVM's first level) plus its ladders' overhead per window in this
// session (pools, starting loadstep, health checks: their seconds less the
// round-1 steps' mean warmup and window); its ladders' seconds per window
// without round-1 records, 0 before its first ladder.
func (r *runner) laterWindowS(p string) float64 {
	var spans []float64
	for _, s := range r.Scenarios {
		k, err := ladder.ReadKnee(ladder.KneePath(filepath.Join(r.runDir, p), s))
		if err != nil {
			continue
		}
		for _, c := range k.Measured {
			if st, err := ladder.ReadStep(ladder.StepPath(filepath.Join(r.runDir, p), s, c, 1)); err == nil {
				spans = append(spans, st.WarmupS+st.DurationS)
			}
		}
	}
	perSession := 0.0
	if r.ladderN[p] > 0 {
		perSession = r.ladderS[p] / float64(r.ladderN[p])
	}
	if len(spans) == 0 {
		return perSession
	}
	mean := 0.0
	for _, v := range spans {
		mean += v / float64(len(spans))
	}
	median, _ := steps.Median(spans)
	return median + max(0, perSession-mean)
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

// closeReserveS is what closing every open product still costs, seconds
// (closingS of each).
func (r *runner) closeReserveS(ctx context.Context) float64 {
	total := 0.0
	for _, p := range r.Products {
		if !r.out[p] && !r.closed[p] {
			total += r.closingS(ctx, p)
		}
	}
	return total
}

// closingS is what closing product p costs, seconds: its windows at shares
// of capacity (one cell's cost, ladder.ShareSettings.CostS -- its shares
// and one search window -- for each of its cells with a steady state so
// far, the cells RunShares will measure), its GC-jitter window and
// gcjitterOverheadS for its warmup, pool, meta and down.
func (r *runner) closingS(ctx context.Context, p string) float64 {
	return float64(r.gcjitterS() + gcjitterOverheadS + r.steadyCells(ctx, p)*r.Shares.CostS())
}

// gcjitterOverheadS is what a product's closing costs beyond its windows:
// the GC-jitter run's warmup and pool, meta and down.
const gcjitterOverheadS = 40

// gcjitterS is the GC-jitter window, seconds (IDPBENCH_GCJITTER_S, else 60).
func (r *runner) gcjitterS() int {
	if v, ok := ladder.Whole(r.env.Getenv("IDPBENCH_GCJITTER_S")); ok {
		return v
	}
	return 60
}

// searchDeadline is when product p's share search of a cell must end,
// with cellsLeft of its cells still to measure after it: the budget less
// what closing still costs once the cell is done (every other open
// product's closing, p's remaining cells at their shares' windows, its
// GC-jitter run); zero without a budget. So a search never takes time the
// closing of another product needs; it is the first thing the budget
// drops, and the record says so (docs/design.md, "Latency at shares of
// capacity").
func (r *runner) searchDeadline(ctx context.Context, p string, cellsLeft int) time.Time {
	b := r.Precision.BudgetS
	if b <= 0 {
		return time.Time{}
	}
	reserve := float64(r.gcjitterS() + gcjitterOverheadS + cellsLeft*len(r.Shares.Shares)*r.Shares.ShareWindows*r.Shares.WindowCostS())
	for _, q := range r.Products {
		if q != p && !r.out[q] && !r.closed[q] {
			reserve += r.closingS(ctx, q)
		}
	}
	return r.env.Started.Add(time.Duration(float64(b)-reserve) * time.Second)
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
