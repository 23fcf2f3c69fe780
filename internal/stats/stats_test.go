package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in  []float64
		med float64
		ok  bool
	}{
		{nil, 0, false},
		{[]float64{7}, 7, true},
		{[]float64{9, 1, 5}, 5, true},
		{[]float64{4, 1, 3, 2}, 2.5, true},
	} {
		in := slices.Clone(tc.in)
		if med, ok := Median(tc.in); med != tc.med || ok != tc.ok {
			t.Errorf("Median(%v) = %v, %v; want %v, %v", tc.in, med, ok, tc.med, tc.ok)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median reordered its input %v", in)
		}
		if tc.ok {
			if med := MedianInPlace(in); med != tc.med || !slices.IsSorted(in) {
				t.Errorf("MedianInPlace(%v) = %v (input now %v); want %v, the input sorted", tc.in, med, in, tc.med)
			}
		}
	}
}

// meanBoot is a bootstrap of the mean of xs.
func meanBoot(b Resampler, xs []float64) (lo, hi []float64, counted int) {
	return b.Run(1, func(r *rand.Rand, out []float64) bool {
		var sum float64
		for range xs {
			sum += xs[r.IntN(len(xs))]
		}
		out[0] = sum / float64(len(xs))
		return true
	})
}

// TestResampler: the percentile interval of a mean's bootstrap lies around
// the mean with about the normal approximation's width; one key draws the
// same interval every time, another a different one; a resample that does
// not count is left out of the intervals and of the count; none counted
// gives no interval.
func TestResampler(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = src.NormFloat64()*10 + 100
	}
	var mean, ss float64
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
	b := Resampler{Key: "a", Stream: 7, N: 4000, Conf: 0.95}
	lo, hi, n := meanBoot(b, xs)
	if n != 4000 || len(lo) != 1 || len(hi) != 1 {
		t.Fatalf("counted %d, intervals %v %v; want 4000 and one each", n, lo, hi)
	}
	if !(lo[0] < mean && mean < hi[0]) || math.Abs((hi[0]-lo[0])/(2*1.96*se)-1) > 0.15 {
		t.Errorf("interval [%.3f, %.3f] of a mean %.3f (se %.3f): want it around the mean, 2 x 1.96 se wide within 15%%", lo[0], hi[0], mean, se)
	}
	lo2, hi2, _ := meanBoot(b, xs)
	if lo2[0] != lo[0] || hi2[0] != hi[0] {
		t.Errorf("the same key drew [%v, %v] then [%v, %v]", lo[0], hi[0], lo2[0], hi2[0])
	}
	b.Key = "b"
	if lo3, hi3, _ := meanBoot(b, xs); lo3[0] == lo[0] && hi3[0] == hi[0] {
		t.Errorf("keys a and b drew the same interval [%v, %v]", lo[0], hi[0])
	}
	k := 0
	lo, hi, n = b.Run(2, func(r *rand.Rand, out []float64) bool {
		k++
		out[0], out[1] = float64(k), -float64(k)
		return k%2 == 0 // the odd resamples do not count
	})
	if n != 2000 || lo[0] < 2 || hi[0] > 4000 || hi[1] > -2 || lo[1] < -4000 {
		t.Errorf("half counted: %d, intervals [%v, %v] and [%v, %v]; want 2000 within [2, 4000] and [-4000, -2]", n, lo[0], hi[0], lo[1], hi[1])
	}
	if lo, hi, n = b.Run(1, func(*rand.Rand, []float64) bool { return false }); n != 0 || lo != nil || hi != nil {
		t.Errorf("none counted: %d, %v, %v; want 0 and no interval", n, lo, hi)
	}
}
