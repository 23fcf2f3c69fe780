package report

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
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

// roundStep is a complete window of product p's scenario in round k at
// qps (label repeat=k), a twin's with twin.
func roundStep(p, scenario string, k int, qps float64, twin bool) StepFile {
	phase := steps.PhaseLadder
	if twin {
		phase = steps.PhaseTwin
	}
	s := &schema.Step{Product: p, Scenario: scenario, Check: schema.ScenarioCheck(scenario), Connections: 8, Status: schema.StatusComplete,
		Requests: int64(qps * 3), OK: int64(qps * 3), QPS: qps, Start: time.Unix(int64(1000*k), 0), End: time.Unix(int64(1000*k+3), 0),
		Labels: map[string]string{"phase": phase, "repeat": strconv.Itoa(k)}}
	return StepFile{Path: p + "/" + scenario + "-c8-r" + strconv.Itoa(k) + ".json", Step: s}
}

// TestPairs: the report pairs two products' windows by round (round 1,
// the level search, is not paired; a window that does not qualify leaves
// a round one side lacks is left out), its A/A pair from the twin's windows; the first screen
// ranks by capacity, each product a share of the fastest with the
// interval and verdict, the reference apart; the chart draws a panel per
// scenario.
func TestPairs(t *testing.T) {
	sc := schema.ScenarioDiscovery
	var in Inputs
	// a: 1000/s; b: 800/s, 0.8 of a in every round, then 0.82 (round 5); ref 5000/s.
	for k := 1; k <= 5; k++ {
		b := 800.0
		if k == 5 {
			b = 820
		}
		in.Steps = append(in.Steps, roundStep("a", sc, k, 1000, false), roundStep("b", sc, k, b, false), roundStep("ref", sc, k, 5000, false))
		if k >= 2 {
			in.Steps = append(in.Steps, roundStep("a", sc, k, 1000*(1+0.01*float64(k%2)), true))
		}
	}
	in.Steps = append(in.Steps[:3], in.Steps[4:]...) // no round-2 window of a
	r := Build(&in, Options{References: []string{"ref"}})
	// b over a: below 1 in every round, so the verdict is "B faster" (a).
	p, ok := r.Pair(sc, "b", "a")
	if want := math.Pow(0.8*0.8*0.82, 1.0/3); !ok || len(p.Rounds) != 3 || p.Rounds[0] != 3 || !p.OK() || p.Verdict() != PairBFaster || math.Abs(p.Center-want) > 1e-9 {
		t.Errorf("b / a: %+v (rounds %v), want rounds 3-5, %.4f, a faster", p, p.Rounds, want)
	}
	if len(r.Twins) != 1 || r.Twins[0].A != "a" || r.Twins[0].N != 3 || !r.Twins[0].Covers1() {
		t.Errorf("A/A pairs %+v, want a against its twin over rounds 3-5, holding 1", r.Twins)
	}
	if len(r.Verdicts) != 1 || len(r.Verdicts[0].Ranked) != 2 || r.Verdicts[0].Ranked[0].Product != "a" || len(r.Verdicts[0].Reference) != 1 {
		t.Fatalf("verdicts %+v, want a then b, ref apart", r.Verdicts)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, MarkdownOptions{ChartsDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	first := strings.Join(strings.SplitN(md.String(), "\n", 41)[:40], "\n")
	if !strings.Contains(first, "| S1 discovery | a ") || !strings.Contains(first, "b 0.81× [") || !strings.Contains(first, "ref 5,000/s, 5.0×") || !strings.Contains(first, "verdict.svg") {
		t.Errorf("the first 40 lines:\n%s\nwant the verdict row (a fastest, b 0.81× with its interval, ref apart) and the chart", first)
	}
	var svg bytes.Buffer
	if err := WriteMultiples(&svg, r.verdictChart()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-panel="S1 discovery"`, ">a<", ">b<", ">ref<", "fill=\"#aaaaaa\"", "0.81×"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q:\n%s", want, svg.String())
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
		in.Steps = append(in.Steps, roundStep("a", sc, k, 1000, false), roundStep("b", sc, k, 800, false))
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
	ns := r.neighbours()
	if len(ns) != 1 || ns[0].Product != "a" || ns[0].Samples != 2 || ns[0].CPUMedian != 2.5 || ns[0].CPUMax != 3 || ns[0].RSSMiB != 100 {
		t.Errorf("neighbours %+v, want a: 2 samples (rounds 2 and 3 of b), CPU median 2.5, max 3, RSS 100 MiB", ns)
	}
}
