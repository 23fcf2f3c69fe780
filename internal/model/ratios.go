package model

import (
	"math/rand/v2"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
)

// Ratio is one product's capacity over another's in one scenario of one
// run (A / B), with a bootstrap interval over their windows: within one
// machine and run, the ratio is the figure a reader can quote.
type Ratio struct {
	Scenario schema.ScenarioInfo
	A, B     string
	Interval // Center = A's headline median over B's
}

// RatioResamples is the number of bootstrap resamples of a ratio.
const RatioResamples = 4000

// ratios computes, per scenario, the headline capacity ratio of every pair
// of products with a capacity (A before B in Products order).
func (r *Report) ratios() {
	for _, sc := range r.Scenarios {
		var cs []Cell
		for _, c := range r.Cells {
			if c.Scenario.Name == sc.Name && c.SteadyLevel >= 0 {
				cs = append(cs, c)
			}
		}
		for i, a := range cs {
			for _, b := range cs[i+1:] {
				r.Ratios = append(r.Ratios, Ratio{Scenario: sc, A: a.Product, B: b.Product,
					Interval: RatioInterval(a.Capacity.HeadlineQPS(), b.Capacity.HeadlineQPS(), sc.Name+"/"+a.Product+"/"+b.Product)})
			}
		}
	}
}

// AA is one cell's A/A check: the product measured twice in the same run as
// if it were two, its plateau's windows split by round within each level
// (the 1st, 3rd, 5th ... window of a level, which rounds 1, 3, 5 measured,
// against the 2nd, 4th ...; a level of one window is left out), and the
// same ratio with the same interval as between two products. An honest
// interval covers 1 in about 95% of the cells.
type AA struct {
	Scenario schema.ScenarioInfo
	Product  string
	Interval // Center = the odd rounds' median over the even rounds'
}

// Covers1 reports whether the interval holds 1 (false without one).
func (a AA) Covers1() bool { return a.OK() && a.Lo <= 1 && 1 <= a.Hi }

// aaChecks computes every capacity cell's A/A check on its headline windows.
func (r *Report) aaChecks() {
	for _, c := range r.Cells {
		if c.SteadyLevel < 0 {
			continue
		}
		odd, even := splitRounds(c.Capacity, c.Levels)
		r.AA = append(r.AA, AA{Scenario: c.Scenario, Product: c.Product,
			Interval: RatioInterval(odd, even, "aa/"+c.Scenario.Name+"/"+c.Product)})
	}
}

// splitRounds splits the headline windows of c's plateau, level by level,
// into its levels' 1st, 3rd ... windows and their 2nd, 4th ...; levels of
// one window go to neither.
func splitRounds(c Capacity, levels []Level) (odd, even []float64) {
	qps, i := c.HeadlineQPS(), 0
	for _, li := range c.Levels {
		n := len(levels[li].Steps)
		for k := range n {
			switch {
			case n < 2:
			case k%2 == 0:
				odd = append(odd, qps[i])
			default:
				even = append(even, qps[i])
			}
			i++
		}
	}
	return odd, even
}

// RatioInterval is median(a) / median(b) with a percentile bootstrap
// interval at CapacityConfidence: each resample draws len(a) windows of a
// and len(b) of b with replacement (the windows are the independent
// blocks). The generator is seeded from key, so a report renders the same
// interval every time. Each side needs MinIntervalSamples windows, as a
// capacity interval does.
func RatioInterval(a, b []float64, key string) Interval {
	ma, _ := stats.Median(a)
	mb, _ := stats.Median(b)
	iv := Interval{N: min(len(a), len(b))}
	if mb > 0 {
		iv.Center = ma / mb
	}
	if n := min(len(a), len(b)); n < MinIntervalSamples {
		iv.NA = "too few windows for an interval"
		return iv
	}
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	boot := stats.Resampler{Key: key, Stream: 0x9e3779b97f4a7c15, N: RatioResamples, Conf: CapacityConfidence}
	lo, hi, counted := boot.Run(1, func(rng *rand.Rand, out []float64) bool {
		for i := range ra {
			ra[i] = a[rng.IntN(len(a))]
		}
		for i := range rb {
			rb[i] = b[rng.IntN(len(b))]
		}
		y := stats.MedianInPlace(rb)
		if y <= 0 {
			return false
		}
		out[0] = stats.MedianInPlace(ra) / y
		return true
	})
	if counted == 0 {
		iv.NA = "no resample of B has a median above 0"
		return iv
	}
	iv.Lo, iv.Hi = lo[0], hi[0]
	return iv
}
