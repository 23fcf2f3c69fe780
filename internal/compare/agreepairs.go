package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
)

// PairAgreement is how two runs of one revision agree on their verdicts
// (docs/design-methodology.md, "Verdicts"): every pair of products of the comparison
// (the reference products left out) that both runs measured round by
// round, its ratio in each, and the A/A pairs of each run.
type PairAgreement struct {
	Pairs []PairCell
	// Paired of len(Pairs): both runs have an interval; Honest of Paired:
	// |ln r2 - ln r1| <= sqrt(h1² + h2²), h the half-width of each
	// interval on a log scale; Reversed: one run calls A faster (its
	// interval above 1), the other B (below 1).
	Paired, Honest, Reversed int
	// MedianPct is the median of |r2/r1 - 1| over the pairs with a ratio on
	// both sides, percent; NaN without any.
	MedianPct float64
	// OldAA, NewAA: each run's A/A pairs: with an interval, and how many of
	// those miss 1, by scenario (a scenario whose A/A misses counts once).
	OldAA, NewAA AACount
}

// PairCell is one pair of products in both runs.
type PairCell struct {
	Scenario, A, B string
	Old, New       model.Pair
	DiffPct        float64 // r2/r1 - 1, percent
	Honest         bool    // both intervals, and the difference within their combined half-widths
	Reversed       bool
}

// AACount counts a run's A/A pairs.
type AACount struct {
	Pairs, WithInterval int
	Missed              []string // the scenarios whose A/A interval misses 1
}

// AgreePairs compares the pairs of old and new (each side's report, with
// refs its reference products, left out of the pairs).
func AgreePairs(old, new Side, refs []string) PairAgreement {
	or, nr := model.Build(old.Inputs, model.Options{References: refs}), model.Build(new.Inputs, model.Options{References: refs})
	a := PairAgreement{OldAA: aaCount(or.Twins), NewAA: aaCount(nr.Twins)}
	var diffs []float64
	for _, op := range or.Pairs {
		if slices.Contains(refs, op.A) || slices.Contains(refs, op.B) {
			continue
		}
		np, ok := nr.Pair(op.Scenario.Name, op.A, op.B)
		if !ok || op.N == 0 || np.N == 0 {
			continue
		}
		c := PairCell{Scenario: op.Scenario.ID + " " + op.Scenario.Name, A: op.A, B: op.B, Old: op, New: np, DiffPct: 100 * (np.Center/op.Center - 1)}
		diffs = append(diffs, math.Abs(c.DiffPct))
		if op.OK() && np.OK() {
			a.Paired++
			h := math.Hypot(logHalf(op.Interval), logHalf(np.Interval))
			c.Honest = math.Abs(math.Log(np.Center/op.Center)) <= h
			if c.Honest {
				a.Honest++
			}
		}
		ov, nv := op.Verdict(), np.Verdict()
		c.Reversed = ov == model.PairAFaster && nv == model.PairBFaster || ov == model.PairBFaster && nv == model.PairAFaster
		if c.Reversed {
			a.Reversed++
		}
		a.Pairs = append(a.Pairs, c)
	}
	a.MedianPct = medianAbsOf(diffs)
	return a
}

// logHalf is an interval's half-width on a log scale (a paired interval
// is symmetric there).
func logHalf(iv model.Interval) float64 { return (math.Log(iv.Hi) - math.Log(iv.Lo)) / 2 }

func aaCount(twins []model.Pair) AACount {
	var c AACount
	for _, t := range twins {
		c.Pairs++
		if !t.OK() {
			continue
		}
		c.WithInterval++
		if !t.Covers1() && !slices.Contains(c.Missed, t.Scenario.Name) {
			c.Missed = append(c.Missed, t.Scenario.Name)
		}
	}
	return c
}

// writePairAgreement renders a PairAgreement.
func writePairAgreement(b *strings.Builder, a PairAgreement) {
	fmt.Fprintf(b, "\n### Agreement of the verdicts (pairs of products, round by round)\n\n"+
		"Every pair of products of the comparison both runs measured round by round: each run's ratio with its 95%% t interval. "+
		"**%d of %d pairs with an interval on both sides are honest** (%s): |ln r2 - ln r1| <= √(h₁²+h₂²), h each interval's half-width on a log scale; "+
		"median |Δ| %s; **reversed verdicts: %d** (A faster in one run, B faster in the other). "+
		"A/A (a product against its twin): OLD %d of %d intervals hold 1 (%s), NEW %d of %d (%s).\n\n",
		a.Honest, a.Paired, pctOf(a.Honest, a.Paired), medianPct(a.MedianPct), a.Reversed,
		a.OldAA.WithInterval-missedPairs(a.OldAA), a.OldAA.WithInterval, missedText(a.OldAA),
		a.NewAA.WithInterval-missedPairs(a.NewAA), a.NewAA.WithInterval, missedText(a.NewAA))
	b.WriteString("| scenario | A / B | OLD [95%] | NEW [95%] | Δ | honest | verdicts OLD → NEW |\n|---|---|--:|--:|--:|---|---|\n")
	for _, c := range a.Pairs {
		verdicts := c.Old.Verdict() + " → " + c.New.Verdict()
		if c.Reversed {
			verdicts = "**" + verdicts + " (reversed)**"
		}
		fmt.Fprintf(b, "| %s | %s / %s | %s | %s | %s | %s | %s |\n", c.Scenario, mdCell(c.A), mdCell(c.B),
			model.FormatInterval(c.Old.Interval, model.FormatRatio, ""), model.FormatInterval(c.New.Interval, model.FormatRatio, ""),
			formatPct(c.DiffPct), map[bool]string{true: "yes", false: "no"}[c.Honest], verdicts)
	}
}

// missedPairs is how many A/A scenarios missed 1 (one pair each).
func missedPairs(c AACount) int { return len(c.Missed) }

func missedText(c AACount) string {
	if len(c.Missed) == 0 {
		return "none missed"
	}
	return "missed: " + strings.Join(c.Missed, ", ")
}
