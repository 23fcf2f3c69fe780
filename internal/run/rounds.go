package run

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/stats"
)

// cell is one window of an interleaved round: product's best level of
// scenario, or its A/A twin.
type cell struct {
	product, scenario string
	twin              bool
}

func (c cell) String() string {
	if c.twin {
		return c.product + " (A/A twin)"
	}
	return c.product
}

// interleave runs the interleaved rounds (docs/design-methodology.md, "The
// schedule"): every open product up with its sampler; round after round
// every cell one window at its best level, scenario by scenario in the
// round's drawn order, the products of a scenario (and its twin) side by
// side in a drawn order of their own, so that a ratio between two products
// compares windows seconds apart; a round starts only while it and the
// closing of every open product fit the budget (fits), the same round for
// every cell. errInterrupted when interrupted.
func (r *runner) interleave(ctx context.Context) error {
	for _, p := range r.Products {
		if !r.out[p] && !r.closed[p] {
			r.startSampler(p, filepath.Join(r.work, p))
		}
	}
	done, why := 1, fmt.Sprintf("--repeats %d", r.MaxRounds())
	for round := 2; round <= r.MaxRounds(); round++ {
		cells := r.roundCells(round)
		if len(cells) == 0 {
			why = "no cell has a level to measure"
			break
		}
		ok, reason := r.fits(ctx, round, cells)
		if !ok {
			why = reason
			break
		}
		r.log.Printf("round %d in the order (seed %d): %s", round, r.Order.Seed, orderText(cells))
		t0 := r.env.Now()
		if err := r.runRound(ctx, round, cells); err != nil {
			return err
		}
		r.roundS += r.env.Now().Sub(t0).Seconds()
		r.roundN += len(cells)
		done = round
	}
	r.log.Printf("rounds: every cell with a level has %d windows at it (round 1's and %d interleaved rounds'); no more: %s", done, done-1, why)
	// The closings measure one product at a time: the idle products'
	// samplers would only add their ticks to its windows (each product's
	// sampler up put a stall a second into the closings' share windows,
	// results/sampler-probe). closeProduct starts the closing product's.
	r.stopProductSamplers()
	return nil
}

// roundCells are round's windows in the order it measures them: the
// scenarios in a drawn order, and within each the open products with a
// level in it and the scenario's twin (twinOf) in a drawn order.
func (r *runner) roundCells(round int) []cell {
	var out []cell
	for _, s := range r.Order.Of(round, "(scenarios)", r.Scenarios) {
		var names []string
		byName := map[string]cell{}
		for _, p := range r.Products {
			if !r.out[p] && !r.closed[p] && r.hasLevel(p, s) {
				c := cell{p, s, false}
				names, byName[c.String()] = append(names, c.String()), c
			}
		}
		if t := r.twinOf(s, byName); t != "" {
			c := cell{t, s, true}
			names, byName[c.String()] = append(names, c.String()), c
		}
		for _, n := range r.Order.Of(round, s, names) {
			out = append(out, byName[n])
		}
	}
	return out
}

// orderText is cells as the log names a round's order: "discovery: oidc
// refop; userinfo: refop (A/A twin) refop".
func orderText(cells []cell) string {
	var b strings.Builder
	for i, c := range cells {
		switch {
		case i == 0:
			b.WriteString(c.scenario + ":")
		case c.scenario != cells[i-1].scenario:
			b.WriteString("; " + c.scenario + ":")
		}
		b.WriteString(" " + c.String())
	}
	return b.String()
}

// twinOf is the product measured twice in scenario s (the A/A check):
// Twins in turn, the scenario's index in Scenarios choosing the first
// tried, the first of them measured in s; "" for none.
func (r *runner) twinOf(s string, measured map[string]cell) string {
	if len(r.Twins) == 0 {
		return ""
	}
	i := slices.Index(r.Scenarios, s)
	for k := range r.Twins {
		t := r.Twins[(i+k)%len(r.Twins)]
		if _, ok := measured[t]; ok {
			return t
		}
	}
	return ""
}

// hasLevel reports whether round 1 found a best level of scenario s for
// product p (its knee record's candidates).
func (r *runner) hasLevel(p, s string) bool {
	k, err := ladder.DecideCandidates(filepath.Join(r.runDir, p), s)
	return err == nil && k.Best > 0
}

// runRound measures round's cells, one window each; a product that fails
// in one is out (its meta says why) and the round goes on without it.
func (r *runner) runRound(ctx context.Context, round int, cells []cell) error {
	for _, c := range cells {
		if r.out[c.product] {
			continue
		}
		state := filepath.Join(r.work, c.product)
		what := fmt.Sprintf("%s round %d %s", c.product, round, c.scenario)
		if c.twin {
			what += " (A/A twin)"
		}
		r.phase("ladder", c.product, what)
		code, windows := r.ladder(ctx, c.product, c.scenario, state, round, c.twin)
		r.step += windows
		r.rounds[c.product] = round
		a := ladderAction(code)
		if a == actNext {
			continue
		}
		err := r.afterLadder(ctx, c.product, state, r.start[c.product], a, code, fmt.Sprintf("%s ladder (round %d)", c.scenario, round))
		if r.failedOrInterrupted(ctx, c.product, err) {
			return errInterrupted
		}
	}
	return nil
}

// fits decides whether round starts: without a budget always; with one
// while the session's elapsed time, the round's windows (roundCostS) and
// the closing of every open product (closeReserveS) fit it. Logged either
// way; the reason when it does not.
func (r *runner) fits(ctx context.Context, round int, cells []cell) (bool, string) {
	if r.BudgetS <= 0 {
		return true, ""
	}
	elapsed := r.env.Now().Sub(r.env.Started).Seconds()
	cost, per := r.roundCostS(cells)
	reserve := r.closeReserveS(ctx)
	sum := fmt.Sprintf("%d s elapsed + %d s (its %d windows at %.1f s each) + %d s (closing %d products: shares, GC jitter, down)",
		int(elapsed), int(cost), len(cells), per, int(reserve), int(r.open()))
	if elapsed+cost+reserve > float64(r.BudgetS) {
		why := fmt.Sprintf("round %d would pass the budget: %s > %d s (IDPBENCH_BUDGET_S)", round, sum, r.BudgetS)
		r.log.Printf("%s: every product closes now", why)
		return false, why
	}
	r.log.Printf("round %d fits the budget: %s <= %d s (IDPBENCH_BUDGET_S)", round, sum, r.BudgetS)
	return true, ""
}

// roundCostS is what an interleaved round of cells is expected to cost,
// seconds, and per window: the seconds per window of the interleaved
// rounds so far; before the first, each product's later window
// (laterWindowS) with the rounds' longer window.
func (r *runner) roundCostS(cells []cell) (total, per float64) {
	if r.roundN > 0 {
		per = r.roundS / float64(r.roundN)
		return per * float64(len(cells)), per
	}
	search, round := ladder.WindowsS(r.Quick, r.env.Getenv)
	longer := float64(round - search)
	for _, c := range cells {
		total += r.laterWindowS(c.product) + longer
	}
	return total, total / float64(max(len(cells), 1))
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
	median, _ := stats.Median(spans)
	return median + max(0, perSession-mean)
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
// drops, and the record says so (docs/design-methodology.md, "Latency at shares of
// capacity").
func (r *runner) searchDeadline(ctx context.Context, p string, cellsLeft int) time.Time {
	b := r.BudgetS
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
	in, err := model.Load(ctx, []string{filepath.Join(r.runDir, p)}, nil, func(string) {})
	if err != nil {
		return len(r.Scenarios)
	}
	return len(CapacityWidths(model.Build(in, model.Options{}), p))
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
func CapacityWidths(rep *model.Report, p string) map[string]model.Interval {
	out := map[string]model.Interval{}
	for _, c := range rep.Cells {
		if c.Product == p && c.SteadyLevel >= 0 {
			out[c.Scenario.Name] = c.Capacity.Headline()
		}
	}
	return out
}
