package model

import (
	"math"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestPairedInterval: the geometric mean of the ratios with Student's t
// interval of the mean of their logarithms; fewer than 3 rounds, the mean
// alone; a ratio that is not a positive number, none.
func TestPairedInterval(t *testing.T) {
	// logs 0, 0.1, -0.1, 0: mean 0, sd sqrt(0.02/3); t(3, 0.975) = 3.1824.
	iv := PairedInterval([]float64{1, math.Exp(0.1), math.Exp(-0.1), 1})
	half := 3.182446 * math.Sqrt(0.02/3) / 2
	if !iv.OK() || iv.N != 4 || math.Abs(iv.Center-1) > 1e-12 || math.Abs(iv.Lo-math.Exp(-half)) > 1e-5 || math.Abs(iv.Hi-math.Exp(half)) > 1e-5 {
		t.Errorf("interval %+v, want 1 [%.5f, %.5f]", iv, math.Exp(-half), math.Exp(half))
	}
	if iv := PairedInterval([]float64{2, 2, 2}); iv.Center != 2 || iv.Lo != 2 || iv.Hi != 2 {
		t.Errorf("three equal ratios: %+v, want 2 [2, 2]", iv)
	}
	if iv := PairedInterval([]float64{2, 8}); iv.OK() || iv.Center != 4 || iv.NA != "2 rounds, no 95% interval: needs 3" {
		t.Errorf("two rounds: %+v, want the geometric mean 4 and no interval", iv)
	}
	if iv := PairedInterval([]float64{1, 0, 1}); iv.OK() || iv.NA != "a round without a ratio" {
		t.Errorf("a zero ratio: %+v", iv)
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{1.1, 1.3, PairAFaster}, {0.7, 0.9, PairBFaster}, {0.9, 1.1, PairNoise}} {
		if got := (Pair{Interval: Interval{N: 5, Center: 1, Lo: c.lo, Hi: c.hi}}).Verdict(); got != c.want {
			t.Errorf("[%g, %g]: %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// TestNeighbours: a product's own process tree in its sampler's samples
// inside the other products' interleaved windows (round >= 2): the idle
// product's CPU and memory while the others are measured; samples inside
// its own windows, or in round 1's, are not counted.
func TestNeighbours(t *testing.T) {
	sc := schema.ScenarioDiscovery
	var in Inputs
	for k := 1; k <= 3; k++ {
		in.Steps = append(in.Steps, recordtest.RoundStep("a", sc, k, 1000, false), recordtest.RoundStep("b", sc, k, 800, false))
	}
	// b's windows: start 1000k .. +3 s (roundStep); a's the same seconds. Put
	// b's round-2 and round-3 windows apart from a's.
	for _, sf := range in.Steps {
		if sf.Step.Product == "b" {
			sf.Step.Start, sf.Step.End = sf.Step.Start.Add(10*time.Second), sf.Step.End.Add(10*time.Second)
		}
	}
	var samples []schema.Sample
	for k := 1; k <= 3; k++ {
		at := time.Unix(int64(1000*k+11), 0) // inside b's window k
		samples = append(samples, schema.Sample{T: at, Source: SourceProcessPrefix + "a", CPUPct: float64(k), RSSBytes: 100 << 20},
			schema.Sample{T: time.Unix(int64(1000*k+1), 0), Source: SourceProcessPrefix + "a", CPUPct: 90, RSSBytes: 100 << 20}) // a's own window
	}
	in.Samples = []SampleFile{{Path: "run/a/samples.jsonl", Samples: samples}}
	r := Build(&in, Options{})
	ns := r.Neighbours()
	if len(ns) != 1 || ns[0].Product != "a" || ns[0].Samples != 2 || ns[0].CPUMedian != 2.5 || ns[0].CPUMax != 3 || ns[0].RSSMiB != 100 {
		t.Errorf("neighbours %+v, want a: 2 samples (rounds 2 and 3 of b), CPU median 2.5, max 3, RSS 100 MiB", ns)
	}
}
