package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/stats"
)

// Components splits the variance of ln qps over the windows of several
// fresh invocations (runs) of one product into the part between
// invocations and the part within one (a one-way random-effects ANOVA;
// Kalibera & Jones, ISMM 2013, on repetition at several levels). In ln
// qps, a component's square root is about the relative standard
// deviation it adds.
type Components struct {
	Invocations int     // invocations with at least one window
	Windows     int     // windows over all of them
	Within      float64 // within-invocation variance of ln qps (the mean square within)
	Between     float64 // between-invocation variance component, 0 when the mean squares do not show one
	F, P        float64 // the F test of "no invocation effect": MSB / MSW and its p-value; NaN when it cannot be taken
}

// VarianceComponents computes the components of groups, one slice of
// window qps per invocation (unbalanced groups are fine; an empty group
// is left out). It needs 2 invocations and a window more than invocations.
func VarianceComponents(groups [][]float64) (Components, error) {
	var c Components
	var all []float64
	var means []float64
	var sizes []int
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		m := 0.0
		for _, q := range g {
			if q <= 0 {
				return c, fmt.Errorf("a window of %g/s: ln qps needs throughput above 0", q)
			}
			m += math.Log(q)
			all = append(all, math.Log(q))
		}
		means, sizes = append(means, m/float64(len(g))), append(sizes, len(g))
	}
	k, n := len(means), len(all)
	c.Invocations, c.Windows, c.F, c.P = k, n, math.NaN(), math.NaN()
	if k < 2 || n <= k {
		return c, fmt.Errorf("%d invocations, %d windows: want 2 invocations or more and more windows than invocations", k, n)
	}
	grand := 0.0
	for _, y := range all {
		grand += y
	}
	grand /= float64(n)
	var ssw, ssb, sumSq float64
	i := 0
	for g, size := range sizes {
		for range size {
			ssw += (all[i] - means[g]) * (all[i] - means[g])
			i++
		}
		ssb += float64(size) * (means[g] - grand) * (means[g] - grand)
		sumSq += float64(size * size)
	}
	msw, msb := ssw/float64(n-k), ssb/float64(k-1)
	n0 := (float64(n) - sumSq/float64(n)) / float64(k-1) // the effective windows per invocation
	c.Within, c.Between = msw, max(0, (msb-msw)/n0)
	if msw > 0 {
		c.F = msb / msw
		c.P = distuv.F{D1: float64(k - 1), D2: float64(n - k)}.Survival(c.F)
	}
	return c, nil
}

// OptimalWindows is Kalibera & Jones' number of windows per invocation
// that gives the narrowest interval for a fixed time: the square root of
// (an invocation's cost / a window's cost) x (within / between variance),
// rounded up, at least 1. 0 when the between component is 0: then more
// windows in one invocation always pay more than another invocation.
func OptimalWindows(c Components, invocationS, windowS float64) int {
	if c.Between <= 0 || windowS <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(math.Sqrt(invocationS/windowS*c.Within/c.Between))))
}

// hierarchicalResamples is the number of resamples of HierarchicalInterval.
const hierarchicalResamples = 4000

// HierarchicalInterval is the median of every window of every invocation
// with a two-level percentile bootstrap interval at
// model.CapacityConfidence: each resample draws the invocations with
// replacement, then each drawn invocation's windows with replacement (Kalibera
// & Jones's hierarchical bootstrap), so the interval covers the variation
// between invocations as well as within them. Seeded from key.
func HierarchicalInterval(groups [][]float64, key string) model.Interval {
	var all []float64
	var gs [][]float64
	for _, g := range groups {
		if len(g) > 0 {
			gs = append(gs, g)
			all = append(all, g...)
		}
	}
	iv := model.Interval{N: len(all)}
	iv.Center, _ = stats.Median(all)
	if len(gs) < 2 {
		iv.NA = "fewer than 2 invocations with windows"
		return iv
	}
	var pool []float64
	boot := stats.Resampler{Key: key, Stream: 0x2545f4914f6cdd1d, N: hierarchicalResamples, Conf: model.CapacityConfidence}
	lo, hi, _ := boot.Run(1, func(rng *rand.Rand, out []float64) bool {
		pool = pool[:0]
		for range gs {
			g := gs[rng.IntN(len(gs))]
			for range g {
				pool = append(pool, g[rng.IntN(len(g))])
			}
		}
		out[0] = stats.MedianInPlace(pool)
		return true
	})
	iv.Lo, iv.Hi = lo[0], hi[0]
	return iv
}
