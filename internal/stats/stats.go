// Package stats holds the statistics the report's tables, aggregate's
// comparisons and the experiments share: the median of float samples and
// the seeded percentile bootstrap. The order-statistic and t intervals stay
// with what they bound (internal/model's capacity.go and paired.go, on gonum).
package stats

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
)

// Median returns the median of vs (the mean of the middle two for an even
// count) and false when vs is empty. vs is left as it was.
func Median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	return MedianInPlace(slices.Clone(vs)), true
}

// MedianInPlace is Median for a scratch slice: it sorts vs instead of a
// copy (a bootstrap draws thousands of resamples). vs is not empty.
func MedianInPlace(vs []float64) float64 {
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// Resampler is a bootstrap: n resamples of k statistics each, drawn from
// a generator seeded from a key and a stream, so a report renders the
// same intervals every time.
type Resampler struct {
	Key    string  // seeds the generator (FNV-1a of it), with Stream
	Stream uint64  // the generator's second seed: a bootstrap's own
	N      int     // resamples
	Conf   float64 // the intervals' confidence, e.g. 0.95
}

// Run draws N resamples: draw fills out (k statistics) from r and says
// whether the resample counts (a ratio over a zero does not). It returns
// each statistic's percentile interval at Conf over the resamples that
// counted, and how many counted; lo and hi are nil when none did.
func (b Resampler) Run(k int, draw func(r *rand.Rand, out []float64) bool) (lo, hi []float64, counted int) {
	h := fnv.New64a()
	h.Write([]byte(b.Key))
	rng := rand.New(rand.NewPCG(h.Sum64(), b.Stream))
	res := make([][]float64, k)
	for i := range res {
		res[i] = make([]float64, 0, b.N)
	}
	out := make([]float64, k)
	for range b.N {
		if !draw(rng, out) {
			continue
		}
		for i, v := range out {
			res[i] = append(res[i], v)
		}
		counted++
	}
	if counted == 0 {
		return nil, nil, 0
	}
	tail := (1 - b.Conf) / 2
	for _, rs := range res {
		slices.Sort(rs)
		lo = append(lo, rs[int(tail*float64(len(rs)))])
		hi = append(hi, rs[int((1-tail)*float64(len(rs)))-1])
	}
	return lo, hi, counted
}
