package compare

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval compare shows.
const Confidence = 0.95

// Stat summarises one metric over a side's windows: the median with its
// distribution-free confidence interval (benchmath, as benchstat computes
// it; infinite with fewer than 6 windows), the range and the count.
type Stat struct {
	Median, Lo, Hi float64 // Lo, Hi: ±Inf when N is too small for an interval
	Min, Max       float64
	N              int
	Values         []float64 // one per window, in ascending order
}

// HalfWidthPct is the larger distance from the median to an end of its
// confidence interval, in percent of the median; +Inf without an interval.
func (s Stat) HalfWidthPct() float64 {
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || s.Median == 0 {
		return math.Inf(1)
	}
	return 100 * math.Max(s.Hi/s.Median-1, 1-s.Lo/s.Median)
}

func summarise(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	smp := benchmath.NewSample(vs, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(smp, Confidence)
	return Stat{Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Min: smp.Values[0], Max: smp.Values[len(smp.Values)-1],
		N: len(vs), Values: slices.Clone(smp.Values)}
}

// Delta is one metric's difference between the sides.
type Delta struct {
	Pct float64 // new median / old median - 1, in percent
	P   float64 // two-sided Mann-Whitney U p-value
	// Testable: the two sample sizes can reach a p-value at or below alpha
	// at all (4 windows per side for alpha 0.05). An untestable delta is
	// never significant, and says so instead of guessing.
	Testable    bool
	Significant bool // Testable and P <= alpha
}

// test compares two sides' values of one metric with the Mann-Whitney U
// test (benchmath.AssumeNothing, benchstat's default).
func test(old, new Stat, alpha float64) Delta {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(old.Values, &th), benchmath.NewSample(new.Values, &th))
	// pTolerance: the p-values are sums of floats; 3+3 windows completely
	// apart give 0.1 plus a rounding error, which alpha 0.1 must accept.
	const pTolerance = 1e-9
	d := Delta{P: c.P, Testable: MinP(old.N, new.N) <= alpha+pTolerance}
	d.Significant = d.Testable && c.P <= alpha+pTolerance
	switch {
	case old.Median != 0:
		d.Pct = 100 * (new.Median/old.Median - 1)
	case new.Median != 0:
		d.Pct = math.Inf(1)
	}
	return d
}

// MinP is the smallest two-sided p-value the Mann-Whitney U test can give
// for samples of n1 and n2 (no ties): both orderings of the samples
// completely apart, 2 / C(n1+n2, n1). A test at alpha needs MinP <= alpha.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// C(n1+n2, n1) as a float: exact enough for any window count.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// MinWindows is the smallest equal number of windows per side at which a
// difference can be significant at alpha.
func MinWindows(alpha float64) int {
	n := 1
	for MinP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}
