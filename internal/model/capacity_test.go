package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

func TestPlateau(t *testing.T) {
	tests := []struct {
		name   string
		levels [][]*schema.Step
		want   []int
	}{
		{"two levels within noise of the best, one below", [][]*schema.Step{windows(2, 900, 910, 920),
			windows(8, 2000, 2100, 1950), windows(32, 2030, 1990, 2080), windows(64, 2040, 2060, 2000)}, []int{1, 2, 3}},
		{"a falling tail leaves the plateau", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(32, 2030, 1980, 2020), windows(64, 1500, 1510, 1490)}, []int{0, 1}},
		{"single windows: the best alone", [][]*schema.Step{windows(8, 2000), windows(32, 2010)}, []int{1}},
		{"levels of one window are not pooled beside repeated ones", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(16, 2005), windows(32, 2030, 1980, 2020)}, []int{0, 2}},
		{"none qualifies", [][]*schema.Step{errWindows(8, 2000, 2010)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := steps.Plateau(tc.levels, schema.CheckSub)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Plateau = %v (%q), want %v", got, why, tc.want)
			}
			first, _ := steps.SelectSteadyLevel(tc.levels, schema.CheckSub)
			if len(got) > 0 && first != got[0] || len(got) == 0 && first != -1 {
				t.Errorf("SelectSteadyLevel = %d, want the plateau's first level of %v", first, got)
			}
		})
	}
}

func TestMedianInterval(t *testing.T) {
	if iv := MedianInterval([]float64{3, 1, 2, 5, 4}); iv.OK() || iv.Center != 3 || !strings.Contains(iv.NA, "5 windows, no 95% interval: needs 6") {
		t.Errorf("5 windows: %+v, want the median 3 and no interval", iv)
	}
	// Six windows: only [min, max] covers the median with >= 95% (96.9%).
	if iv := MedianInterval([]float64{6, 1, 2, 5, 4, 3}); !iv.OK() || iv.Lo != 1 || iv.Hi != 6 || iv.Center != 3.5 {
		t.Errorf("6 windows: %+v, want 3.5 [1, 6]", iv)
	}
	// Many windows: the interval narrows inside the range and holds the median.
	var vs []float64
	for i := range 40 {
		vs = append(vs, float64(100+i))
	}
	iv := MedianInterval(vs)
	if !iv.OK() || iv.Lo <= 100 || iv.Hi >= 139 || iv.Lo > iv.Center || iv.Hi < iv.Center {
		t.Errorf("40 windows: %+v, want an interval inside (100, 139) around the median", iv)
	}
	if got := (Interval{N: 6, Center: 100, Lo: 90, Hi: 104}).HalfPct(); math.Abs(got-10) > 1e-9 {
		t.Errorf("HalfPct = %g, want the farther end, 10", got)
	}
}

// TestMedianIntervalCoverage: over many samples of 9 windows from a known
// distribution, the interval covers the true median in at least 95% of them.
func TestMedianIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	covered, trials := 0, 4000
	for range trials {
		vs := make([]float64, 9)
		for i := range vs {
			vs[i] = 1000 * math.Exp(0.1*rng.NormFloat64()) // median 1000
		}
		if iv := MedianInterval(vs); iv.Lo <= 1000 && 1000 <= iv.Hi {
			covered++
		}
	}
	if share := float64(covered) / float64(trials); share < 0.95 {
		t.Errorf("the interval covered the median in %.1f%% of samples, want >= 95%%", 100*share)
	}
}

// probedCell builds a cell of one product whose windows follow the host
// probe with the given slope: qps = base · (probe/1000)^slope.
func probedCell(product string, slope float64, probes [][]float64) (Cell, []SampleFile) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var files []StepFile
	var samples []schema.Sample
	for li, ps := range probes {
		for _, p := range ps {
			start := t0.Add(time.Duration(len(files)) * time.Minute)
			s := step(4<<li, 1000*math.Pow(p/1000, slope), 0, false, schema.StatusComplete)
			s.Scenario, s.Product, s.Start, s.End = schema.ScenarioDiscovery, product, start, start.Add(30*time.Second)
			s.Check = schema.ScenarioCheck(schema.ScenarioDiscovery)
			files = append(files, StepFile{Path: product + "/x.json", Step: s})
			us := p
			samples = append(samples, schema.Sample{T: start.Add(10 * time.Second), Source: SourceHost, ProbeUS: &us})
		}
	}
	sf := []SampleFile{{Path: product + "/samples.jsonl", Samples: samples}}
	c := buildCell(schema.ScenarioInfo{Name: schema.ScenarioDiscovery}, Product{Name: product}, files, newProbeIndex(sf), sessionIndex{})
	return c, sf
}

func TestHostSlope(t *testing.T) {
	probes := [][]float64{{1000, 1100, 900, 1050}, {950, 1200, 1000, 1020}, {980, 1010, 1150, 990}}
	c, _ := probedCell("p", -0.8, probes)
	h := slopeOf("p", []Cell{c})
	if h.NA != "" || math.Abs(h.Slope+0.8) > 1e-9 || math.Abs(h.Corr+1) > 1e-9 || h.Windows != 12 {
		t.Fatalf("slope %+v, want -0.8 from 12 windows, correlation -1", h)
	}
	// Every window at one host speed: the plateau's windows become equal.
	iv, adj := c.Capacity.AdjustedAt(h, 1000)
	for _, a := range adj {
		if math.Abs(a-1000) > 1e-6 {
			t.Fatalf("adjusted windows %v, want 1000 each", adj)
		}
	}
	if !iv.OK() || math.Abs(iv.HalfPct()) > 1e-6 {
		t.Errorf("adjusted interval %+v, want 1000 with no width", iv)
	}
	if few := slopeOf("p", []Cell{c}[:0]); few.NA == "" {
		t.Errorf("no windows: slope %+v, want N/A", few)
	}
	if _, ok := (HostSlope{NA: "x"}).Adjust(1, 1, 1); ok {
		t.Error("Adjust with an N/A slope succeeded")
	}
}

// TestHostSlopeImplausible: a slope steeper than -SteepestSlope or above 0
// is N/A naming it (the probe moved with something else), so nothing is
// adjusted by it; -1.45 is kept.
func TestHostSlopeImplausible(t *testing.T) {
	probes := [][]float64{{1000, 1100, 900, 1050}, {950, 1200, 1000, 1020}, {980, 1010, 1150, 990}}
	for _, tt := range []struct {
		slope float64
		na    string
	}{
		{-3.7, "slope -3.70 (r -1.00, 12 windows) outside [-1.5, 0]"},
		{0.4, "slope 0.40 (r 1.00, 12 windows) outside [-1.5, 0]"},
		{-1.45, ""},
	} {
		c, _ := probedCell("p", tt.slope, probes)
		h := slopeOf("p", []Cell{c})
		if (tt.na == "") != (h.NA == "") || !strings.Contains(h.NA, tt.na) {
			t.Errorf("slope %g: %+v, want N/A %q", tt.slope, h, tt.na)
		}
		if iv, _ := c.Capacity.AdjustedAt(h, 1000); (tt.na != "") != (iv.NA != "") {
			t.Errorf("slope %g: adjusted %+v", tt.slope, iv)
		}
	}
}

func TestBuildAdjustsCapacity(t *testing.T) {
	c, sf := probedCell("p", -1, [][]float64{{1000, 1100, 900, 1050}, {950, 1200, 1000, 1020}, {980, 1010, 1150, 990}})
	var recs []StepFile
	for _, ls := range c.Ladder {
		recs = append(recs, ls.StepFile)
	}
	r := Build(&Inputs{Steps: recs, Samples: sf}, Options{})
	var got Cell
	for _, rc := range r.Cells {
		if rc.Product == "p" && rc.Scenario.Name == schema.ScenarioDiscovery {
			got = rc
		}
	}
	if len(got.Capacity.Levels) != 3 || got.Capacity.Windows() != 12 {
		t.Fatalf("capacity %+v, want 12 windows of 3 levels", got.Capacity)
	}
	if r.HostRefUS != 1005 {
		t.Errorf("reference probe %g, want the median of the windows' probes, 1005", r.HostRefUS)
	}
	want := 1000 * 1000 / r.HostRefUS // qps = 10⁶/probe, at the reference
	if a := got.Capacity.Adjusted; !a.OK() || math.Abs(a.Center-want) > 1e-6 || a.HalfPct() > 1e-6 {
		t.Errorf("adjusted %+v, want %g without width", a, want)
	}
	if !got.Capacity.HeadlineIsAdjusted() || got.Capacity.Raw.HalfPct() < 5 {
		t.Errorf("raw %+v should be wide and the headline adjusted", got.Capacity.Raw)
	}
}

func TestRatioInterval(t *testing.T) {
	a := []float64{100, 104, 98, 101, 99, 103, 97}
	b := []float64{200, 196, 205, 199, 201, 203}
	iv := RatioInterval(a, b, "k")
	if !iv.OK() || math.Abs(iv.Center-100.0/200.5) > 1e-9 || iv.Lo > iv.Center || iv.Hi < iv.Center || iv.Lo < 0.46 || iv.Hi > 0.54 {
		t.Errorf("ratio %+v, want about 0.5 inside [0.46, 0.54]", iv)
	}
	if again := RatioInterval(a, b, "k"); again != iv {
		t.Errorf("the seeded bootstrap gave %+v then %+v", iv, again)
	}
	if few := RatioInterval(a[:3], b, "k"); few.OK() {
		t.Errorf("3 windows: %+v, want no interval", few)
	}
}

// TestRatioAA: one product's windows split in two as if they were two
// products: the ratio's interval covers 1.
func TestRatioAA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	misses := 0
	for trial := range 200 {
		var a, b []float64
		for range 9 {
			a = append(a, 1000*math.Exp(0.1*rng.NormFloat64()))
			b = append(b, 1000*math.Exp(0.1*rng.NormFloat64()))
		}
		if iv := RatioInterval(a, b, string(rune(trial))); iv.Lo > 1 || iv.Hi < 1 {
			misses++
		}
	}
	// 95% intervals miss 1 in about 5% of A/A pairs; 20 of 200 is beyond chance.
	if misses > 20 {
		t.Errorf("the A/A ratio missed 1 in %d of 200 pairs", misses)
	}
}

// TestSplitRounds: a plateau's windows split level by level, the 1st, 3rd
// ... window of a level against its 2nd, 4th ...; a level of one window
// goes to neither; a cell's A/A check is the ratio of the two halves.
func TestSplitRounds(t *testing.T) {
	levels := []Level{{Steps: []int{0}}, {Steps: []int{1, 2, 3}}, {Steps: []int{4, 5}}}
	c := Capacity{Levels: []int{0, 1, 2}, QPS: []float64{10, 21, 22, 23, 31, 32}}
	odd, even := splitRounds(c, levels)
	if !slices.Equal(odd, []float64{21, 23, 31}) || !slices.Equal(even, []float64{22, 32}) {
		t.Errorf("splitRounds = %v, %v; want [21 23 31], [22 32]", odd, even)
	}
	var qps []float64
	for k := range 14 {
		qps = append(qps, 1000+float64(k%2)*100) // the even rounds 10% faster
	}
	c = Capacity{Levels: []int{0}, QPS: qps}
	r := &Report{Cells: []Cell{{Product: "p", Capacity: c, Levels: []Level{{Steps: make([]int, 14)}}}}}
	r.aaChecks()
	if len(r.AA) != 1 || !r.AA[0].OK() || math.Abs(r.AA[0].Center-1000.0/1100) > 1e-9 || r.AA[0].Covers1() {
		t.Errorf("A/A of 7 windows at 1000 against 7 at 1100: %+v; want 0.909, an interval without 1", r.AA)
	}
	r.Cells[0].SteadyLevel = -1
	r.AA = nil
	if r.aaChecks(); len(r.AA) != 0 {
		t.Errorf("a cell without a steady level has an A/A check: %+v", r.AA)
	}
}

// TestHostSamplerFile: the run's host sampler file (host records alone,
// at the run directory's top) is no product's and is not listed as
// unattributed; its probe is each window's host speed. A file of another
// process is still listed.
func TestHostSamplerFile(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var host []schema.Sample
	for i, us := range []float64{2100, 2300, 2200, 9000} {
		host = append(host, schema.Sample{T: t0.Add(time.Duration(i) * time.Second), Source: SourceHost, CPUPct: 90, ProbeUS: new(us)})
	}
	other := []schema.Sample{{T: t0, Source: SourceProcessPrefix + "stranger", RSSBytes: 1}, {T: t0, Source: SourceHost, CPUPct: 90}}
	r := &Report{Products: []Product{{Name: "refop"}}, Samples: []SampleFile{
		{Path: "run/host-samples-20261206T100000Z.jsonl", Samples: host},
		{Path: "run/stranger-samples.jsonl", Samples: other},
	}}
	r.perProduct()
	if want := []string{"run/stranger-samples.jsonl"}; !slices.Equal(r.Unattributed, want) {
		t.Errorf("unattributed %q, want %q", r.Unattributed, want)
	}
	if us, ok := newProbeIndex(r.Samples).window(t0, t0.Add(2*time.Second)); !ok || us != 2200 {
		t.Errorf("probe in the first 2 s: %v %v, want 2200 (the host file's median)", us, ok)
	}
	if hostOnly(SampleFile{}) {
		t.Error("an empty file is host-only")
	}
}
