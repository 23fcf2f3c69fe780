package compare

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/idpbench/idpbench/internal/model"
)

// RefDelta is a cell's paired figure across the runs: its ratio to the
// run's reference product (model.Pair: its window over the reference's
// in each interleaved round, seconds apart), in OLD and in NEW. Within a
// run the ratio holds little of the machine's speed, so its change
// between the runs is the product's more than the machine's; a gate on it
// ("ref<-5%") asks whether the product lost ground against the reference,
// not whether the machine was slower that hour.
type RefDelta struct {
	Reference string
	Old, New  model.Pair
	Delta     // Pct: NEW's ratio over OLD's, minus 1; P: Welch's t test of the rounds' log ratios
}

// refDelta compares a cell's ratio to the reference in the two runs; nil
// when either run has none.
func refDelta(ref string, old, new *model.Pair, alpha float64) *RefDelta {
	if old == nil || new == nil || old.N == 0 || new.N == 0 {
		return nil
	}
	d := &RefDelta{Reference: ref, Old: *old, New: *new}
	d.Pct = 100 * (new.Center/old.Center - 1)
	d.P, d.Testable = welch(logs(old.Ratios), logs(new.Ratios))
	d.Significant = d.Testable && d.P <= alpha
	return d
}

// minRefRounds is the fewest rounds a side needs for the test.
const minRefRounds = 3

// welch is the two-sided p-value of Welch's t test of a and b's means;
// false with fewer than minRefRounds values a side.
func welch(a, b []float64) (float64, bool) {
	if len(a) < minRefRounds || len(b) < minRefRounds {
		return math.NaN(), false
	}
	ma, va := stat.MeanVariance(a, nil)
	mb, vb := stat.MeanVariance(b, nil)
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	if sa+sb == 0 {
		if ma == mb {
			return 1, true
		}
		return 0, true
	}
	t := (mb - ma) / math.Sqrt(sa+sb)
	df := (sa + sb) * (sa + sb) / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t)), true
}

func logs(rs []float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = math.Log(r)
	}
	return out
}

// writeRefTable renders every cell's ratio to the reference in both runs.
func writeRefTable(b *strings.Builder, rows []Row) {
	var has []Row
	for _, r := range rows {
		if r.Ref != nil {
			has = append(has, r)
		}
	}
	if len(has) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Against the reference, paired within each run\n\n"+
		"Each cell's capacity over the reference product's (%s), window by window in the interleaved rounds of its run: "+
		"the machine's speed cancels within a round, so a change here is the product's. Δ: NEW over OLD; p: Welch's t test of the rounds' log ratios (>= %d rounds a side).\n\n",
		has[0].Ref.Reference, minRefRounds)
	b.WriteString("| product | scenario | OLD × reference [95%] | NEW × reference [95%] | Δ |\n|---|---|--:|--:|--:|\n")
	for _, r := range has {
		d := r.Ref.Delta
		delta := "**" + formatPct(d.Pct) + "** (" + formatP(d) + ")"
		switch {
		case !d.Testable:
			delta = "~ (too few rounds: " + formatPct(d.Pct) + ")"
		case !d.Significant:
			delta = "~ (" + formatP(d) + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCell(r.Product), r.Scenario,
			model.FormatInterval(r.Ref.Old.Interval, model.FormatRatio, ""), model.FormatInterval(r.Ref.New.Interval, model.FormatRatio, ""), delta)
	}
}
