package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

// TestVarianceComponents: a hand-computed one-way ANOVA on ln qps (two
// invocations of two windows: ln 0, 0.2 and 1, 1.2): MSW 0.02, MSB 1,
// between (1 - 0.02) / 2, F 50 on (1, 2) degrees of freedom, whose p-value
// is that of |t| > sqrt(50) on 2: 1 - sqrt(50/52).
func TestVarianceComponents(t *testing.T) {
	e := math.Exp
	c, err := VarianceComponents([][]float64{{e(0), e(0.2)}, {e(1), e(1.2)}, nil})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if c.Invocations != 2 || c.Windows != 4 || !near(c.Within, 0.02) || !near(c.Between, 0.49) || !near(c.F, 50) ||
		!near(c.P, 1-math.Sqrt(50.0/52)) {
		t.Errorf("got %+v; want 2 invocations, 4 windows, within 0.02, between 0.49, F 50, p %.6f", c, 1-math.Sqrt(50.0/52))
	}
	// No invocation effect: the mean squares say none, so between is 0.
	c, err = VarianceComponents([][]float64{{e(0), e(1)}, {e(0.1), e(0.9)}})
	if err != nil || c.Between != 0 || c.P < 0.5 {
		t.Errorf("equal invocations: %+v, %v; want between 0 and a large p", c, err)
	}
	for _, bad := range []struct {
		groups [][]float64
		want   string
	}{
		{[][]float64{{1, 2, 3}}, "1 invocations"},
		{[][]float64{{1}, {2}}, "more windows than invocations"},
		{[][]float64{{1, 0}, {2, 3}}, "above 0"},
	} {
		if _, err := VarianceComponents(bad.groups); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: error %v, want %q", bad.groups, err, bad.want)
		}
	}
}

func TestOptimalWindows(t *testing.T) {
	for _, tt := range []struct {
		c                Components
		invocationS, win float64
		want             int
	}{
		{Components{Within: 0.02, Between: 0.49}, 60, 10, 1},
		{Components{Within: 0.01, Between: 0.0001}, 100, 10, 32}, // sqrt(10 x 100) = 31.6
		{Components{Within: 0.01}, 100, 10, 0},                   // no between component
	} {
		if got := OptimalWindows(tt.c, tt.invocationS, tt.win); got != tt.want {
			t.Errorf("OptimalWindows(%+v, %g, %g) = %d, want %d", tt.c, tt.invocationS, tt.win, got, tt.want)
		}
	}
}

// TestHierarchicalInterval: invocations whose means differ by 10% steps
// while their windows agree within 1%: the interval over windows alone is
// far narrower than the one that resamples the invocations, which holds
// every invocation's level but the extremes.
func TestHierarchicalInterval(t *testing.T) {
	var groups [][]float64
	var all []float64
	for _, mean := range []float64{900, 1000, 1100, 1200} {
		var g []float64
		for k := range 6 {
			g = append(g, mean*(1+0.01*float64(k%3-1)))
		}
		groups = append(groups, g)
		all = append(all, g...)
	}
	h := HierarchicalInterval(groups, "t")
	flat := model.MedianInterval(all)
	if !h.OK() || !flat.OK() || h.N != 24 {
		t.Fatalf("hierarchical %+v, flat %+v", h, flat)
	}
	if h.Hi-h.Lo < 2*(flat.Hi-flat.Lo) || h.Lo > 1000 || h.Hi < 1100 {
		t.Errorf("hierarchical [%g, %g] against flat [%g, %g]: want at least twice as wide, holding 1000 and 1100", h.Lo, h.Hi, flat.Lo, flat.Hi)
	}
	if again := HierarchicalInterval(groups, "t"); again != h {
		t.Errorf("the same key drew %+v, then %+v", h, again)
	}
	if one := HierarchicalInterval(groups[:1], "t"); one.OK() {
		t.Errorf("one invocation has an interval: %+v", one)
	}
}
