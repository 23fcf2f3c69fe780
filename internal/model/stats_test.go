package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func smp(sec int, src string, rssMiB int64, cpu float64) schema.Sample {
	return schema.Sample{Schema: schema.SampleV1, T: at(sec), Source: src, RSSBytes: rssMiB << 20, CPUPct: cpu}
}

func TestMedianAndSpread(t *testing.T) {
	tests := []struct {
		in      []float64
		med     float64
		ok      bool
		min, mx float64
	}{
		{nil, 0, false, 0, 0},
		{[]float64{7}, 7, true, 7, 7},
		{[]float64{9, 1, 5}, 5, true, 1, 9},
		{[]float64{4, 1, 3, 2}, 2.5, true, 1, 4},
	}
	for _, tc := range tests {
		in := slices.Clone(tc.in)
		med, ok := stats.Median(tc.in)
		if med != tc.med || ok != tc.ok {
			t.Errorf("Median(%v) = %v, %v; want %v, %v", tc.in, med, ok, tc.med, tc.ok)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median reordered its input: %v", tc.in)
		}
		sp := steps.SpreadOf(tc.in)
		if sp.N != len(tc.in) || sp.Min != tc.min || sp.Max != tc.mx || sp.Median != tc.med {
			t.Errorf("SpreadOf(%v) = %+v", tc.in, sp)
		}
	}
}

func TestSamplesInWindows(t *testing.T) {
	var samples []schema.Sample
	for s := 0; s <= 30; s++ {
		samples = append(samples, smp(s, "host", 0, float64(s)))
	}
	ws := []Window{{Start: at(5), End: at(7)}, {Start: at(20), End: at(21)}}
	var got []float64
	for _, s := range steps.SamplesIn(samples, ws) {
		got = append(got, s.CPUPct)
	}
	if want := []float64{5, 6, 7, 20, 21}; !slices.Equal(got, want) {
		t.Errorf("samples in windows at %v, want %v (both ends included)", got, want)
	}
	if n := len(steps.SamplesIn(samples, nil)); n != 0 {
		t.Errorf("no windows selected %d samples", n)
	}
}

func TestIntervalGaps(t *testing.T) {
	iv := func(ts, length float64, req int64) schema.Interval {
		return schema.Interval{TS: ts, LengthS: length, Requests: req}
	}
	step := func(dur float64, ivs ...schema.Interval) *schema.Step {
		return &schema.Step{DurationS: dur, IntervalS: 10, Status: schema.StatusComplete, Intervals: ivs}
	}
	tests := []struct {
		name string
		s    *schema.Step
		want []string
	}{
		{"contiguous", step(30, iv(0, 10, 5), iv(10, 10, 5), iv(20, 10, 5)), nil},
		{"rounded t_s is contiguous", step(20, iv(0, 10, 5), iv(10.0004, 9.9996, 5)), nil},
		{"short last interval", step(25, iv(0, 10, 5), iv(10, 10, 5), iv(20, 5, 5)), nil},
		{"length from interval_s", step(20, iv(0, 0, 5), iv(10, 0, 5)), nil},
		{"missing middle", step(30, iv(0, 10, 5), iv(20, 10, 5)), []string{"no interval for 10 s–20 s"}},
		{"late start", step(20, iv(10, 10, 5)), []string{"no interval for 0 s–10 s"}},
		{"early end", step(30, iv(0, 10, 5), iv(10, 10, 5)), []string{"no interval for 20 s–30 s"}},
		{"stall", step(20, iv(0, 10, 5), iv(10, 10, 0)), []string{"no requests in 10 s–20 s"}},
		{"overlap", step(15, iv(0, 10, 5), iv(5, 10, 5)), []string{"intervals overlap at 5 s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := steps.IntervalGaps(tc.s); !slices.Equal(got, tc.want) {
				t.Errorf("gaps %q, want %q", got, tc.want)
			}
		})
	}
	interrupted := step(30, iv(0, 10, 5))
	interrupted.Status = schema.StatusInterrupted
	if got := steps.IntervalGaps(interrupted); len(got) != 0 {
		t.Errorf("an interrupted step's short series is not a gap: %q", got)
	}
}

func TestJitterSpreadSkipsEmptyIntervals(t *testing.T) {
	s := &schema.Step{Product: "p", Labels: map[string]string{"phase": steps.PhaseGCJitter}, DurationS: 40, IntervalS: 10,
		Status: schema.StatusComplete, Intervals: []schema.Interval{
			{TS: 0, LengthS: 10, Requests: 9, P99MS: 30}, {TS: 10, LengthS: 10, Requests: 0},
			{TS: 20, LengthS: 10, Requests: 9, P99MS: 10}, {TS: 30, LengthS: 10, Requests: 9, P99MS: 20}}}
	j := jitterFor([]StepFile{{Path: "p/gcjitter.json", Step: s}}, "p")
	if j.NA != "" || j.P99 != (Spread{Min: 10, Median: 20, Max: 30, N: 3}) || len(j.Gaps) != 1 {
		t.Errorf("jitter %+v; want spread 10/20/30 over 3 intervals and one gap", j)
	}
	segs := jitterSegments(s)
	if len(segs) != 2 || len(segs[0]) != 1 || len(segs[1]) != 2 || segs[1][0].X != 25 {
		t.Errorf("segments %v; want the line broken at the empty interval, points at interval middles", segs)
	}
	if j := jitterFor(nil, "p"); j.NA != "no gcjitter record" {
		t.Errorf("NA %q", j.NA)
	}
}

func TestIdPSource(t *testing.T) {
	tests := []struct {
		name    string
		samples []schema.Sample
		want    string
	}{
		{"named after the product", []schema.Sample{smp(0, "process:java", 900, 0), smp(0, "process:kc", 10, 0)}, "process:kc"},
		{"largest tree otherwise", []schema.Sample{smp(0, "process:a", 10, 0), smp(0, "process:b", 900, 0), smp(0, "postgres", 5000, 0)}, "process:b"},
		{"none", []schema.Sample{smp(0, "host", 0, 50)}, ""},
	}
	for _, tc := range tests {
		if got := IdPSource("kc", tc.samples); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBuildResourcesWindows(t *testing.T) {
	var samples []schema.Sample
	for s := 0; s <= 60; s++ {
		rss := int64(100)
		if s >= 10 && s <= 20 {
			rss = 190 + int64(s) // inside the steady window: 200 to 210
		}
		samples = append(samples, smp(s, "process:p", rss, 50), smp(s, "postgres", 2*rss, 10), smp(s, "host", 0, 40))
	}
	samples = append(samples, smp(15, "postgres", 0, 0)) // server processes not visible: ignored for RSS
	steady := &schema.Step{Product: "p", Scenario: "discovery", Check: schema.CheckIssuer, Connections: 4, QPS: 10, Requests: 100, Status: schema.StatusComplete,
		Start: at(10), End: at(20), Host: schema.Host{CPUs: 2}}
	other := &schema.Step{Product: "p", Scenario: "discovery", Check: schema.CheckIssuer, Connections: 2, QPS: 5, Requests: 50, Status: schema.StatusComplete,
		Start: at(40), End: at(50), Host: schema.Host{CPUs: 2}}
	in := &Inputs{Steps: []StepFile{{Path: "r/p/discovery-c2.json", Step: other}, {Path: "r/p/discovery-c4.json", Step: steady}},
		Samples: []SampleFile{{Path: "r/p/samples.jsonl", Samples: samples}}}
	r := Build(in, Options{})
	res := r.Resources[0]
	if res.Windows != 1 || res.InWindows != 34 {
		t.Errorf("windows %d, records in them %d; want 1 and 11 ticks x 3 sources + 1", res.Windows, res.InWindows)
	}
	if res.IdPRSS.Value != 205 || res.DBRSS.Value != 410 || res.StackRSS.Value != 615 {
		t.Errorf("RSS idp %+v db %+v stack %+v; want the window's medians 205, 410, 615 MiB", res.IdPRSS, res.DBRSS, res.StackRSS)
	}
	if len(res.Steps) != 1 || res.Steps[0].VerdictKind != VerdictNone || res.Steps[0].HostBusy.Value != 40 {
		t.Errorf("steps %+v; want one verdict %q with host 40%%", res.Steps, VerdictNone)
	}
}

func TestResourcesNA(t *testing.T) {
	st := &schema.Step{Product: "p", Scenario: "discovery", Check: schema.CheckIssuer, Connections: 2, Requests: 100, Status: schema.StatusComplete,
		Start: at(0), End: at(10), Driver: schema.Driver{HostCPUPct: 95}}
	tests := []struct {
		name      string
		samples   []schema.Sample
		wantIdP   string
		wantDB    string
		wantVerd  string
		wantStack string
	}{
		{"no sampler file", nil, "no sampler records", "no sampler records", "N/A", "no sampler records"},
		{"no postgres", []schema.Sample{smp(5, "process:p", 10, 170)}, "", "no postgres samples", VerdictIdP, "no postgres samples"},
		{"postgres invisible", []schema.Sample{smp(5, "process:p", 10, 5), smp(5, "postgres", 0, 0)}, "",
			"PostgreSQL processes not visible to the sampler", VerdictHost, "PostgreSQL processes not visible"},
		{"samples outside the window", []schema.Sample{smp(50, "process:p", 10, 5), smp(50, "postgres", 10, 0)},
			"no process:p samples inside", "no postgres samples inside", "N/A", "no process:p samples inside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Inputs{Steps: []StepFile{{Path: "r/p/discovery-c2.json", Step: st}}}
			if tc.samples != nil {
				in.Samples = []SampleFile{{Path: "r/p/samples.jsonl", Samples: tc.samples}}
			}
			res := Build(in, Options{}).Resources[0]
			check := func(what string, f Figure, want string) {
				if want == "" && !f.OK || want != "" && (f.OK || !strings.Contains(f.NA, want)) {
					t.Errorf("%s %+v, want N/A containing %q (\"\" = a value)", what, f, want)
				}
			}
			check("IdP RSS", res.IdPRSS, tc.wantIdP)
			check("DB RSS", res.DBRSS, tc.wantDB)
			check("stack RSS", res.StackRSS, tc.wantStack)
			if len(res.Steps) != 1 || !strings.HasPrefix(res.Steps[0].Verdict, tc.wantVerd) {
				t.Errorf("verdict %+v, want %q", res.Steps, tc.wantVerd)
			}
		})
	}
}

func TestTopQueriesMergeFiles(t *testing.T) {
	final := func(qs ...schema.Query) []schema.Sample {
		return []schema.Sample{{Source: "postgres"}, {Source: "postgres", TopQueries: qs}, {Source: "host"}}
	}
	files := []SampleFile{
		{Path: "a", Samples: final(schema.Query{Query: "q1", Calls: 10, TotalMS: 100}, schema.Query{Query: "q2", Calls: 1, TotalMS: 90})},
		{Path: "b", Samples: final(schema.Query{Query: "q2", Calls: 1, TotalMS: 30}, schema.Query{Query: "q3", Calls: 4, TotalMS: 8},
			schema.Query{Query: "q4", Calls: 1, TotalMS: 1})},
	}
	got, na := topQueries(files)
	if na != "" || len(got) != TopQueryCount || got[0].Query != "q2" || got[0].TotalMS != 120 || got[0].MeanMS != 60 ||
		got[1].Query != "q1" || got[2].Query != "q3" {
		t.Errorf("top %+v (na %q); want q2 (120 ms, 2 calls), q1, q3", got, na)
	}
	if _, na := topQueries([]SampleFile{{Path: "a", Samples: []schema.Sample{{Source: "postgres"}}}}); !strings.Contains(na, "pg_stat_statements") {
		t.Errorf("NA %q, want the pg_stat_statements hint", na)
	}
	if _, na := topQueries([]SampleFile{{Path: "a", Samples: []schema.Sample{{Source: "host"}}}}); na != "no postgres samples" {
		t.Errorf("NA %q", na)
	}
}

func TestColdstartFor(t *testing.T) {
	rec := func(mode, status string, start int, s float64) ColdstartFile {
		return ColdstartFile{Path: "r/p/coldstart-" + mode + ".json", Coldstart: &schema.Coldstart{Product: "p", Mode: mode,
			Status: status, Start: at(start), SecondsToReady: s, Error: "boom"}}
	}
	files := []ColdstartFile{rec("A", schema.StatusComplete, 0, 5), rec("A", schema.StatusComplete, 100, 7), rec("B", schema.StatusError, 0, 300)}
	if c := coldstartFor(files, "p", "A"); c.NA != "" || c.File.Coldstart.SecondsToReady != 7 {
		t.Errorf("A = %+v, want the later record (7 s)", c)
	}
	if c := coldstartFor(files, "p", "B"); c.NA != "status error: boom" {
		t.Errorf("B NA %q, want the error", c.NA)
	}
	if c := coldstartFor(files, "q", "A"); c.NA != "no coldstart-A record" {
		t.Errorf("other product NA %q", c.NA)
	}
}

// TestRun1PerProduct checks the fixture run's per-product figures: each of
// hydra's steady windows shows a different bottleneck (fixtures_test.go
// hydraLoad), keycloak has no database samples, zitadel did not run.
func TestRun1PerProduct(t *testing.T) {
	in, _ := loadRun1(t)
	r := Build(in, Options{})
	byName := map[string]int{}
	for i, p := range r.Products {
		byName[p.Name] = i
	}
	hydra := r.Resources[byName["hydra"]]
	kinds := map[string]string{}
	for _, u := range hydra.Steps {
		kinds[u.Scenario.Name] = u.VerdictKind
	}
	want := map[string]string{"discovery": VerdictIdP, "client_credentials": VerdictHost, "refresh": VerdictDB,
		"client_credentials_login": VerdictNA} // its steps ran after the sampler stopped
	if len(kinds) != len(want) {
		t.Errorf("hydra verdicts %v, want %v", kinds, want)
	}
	for sc, k := range want {
		if kinds[sc] != k {
			t.Errorf("hydra %s verdict %q, want %q", sc, kinds[sc], k)
		}
	}
	if len(hydra.TopQueries) != TopQueryCount || hydra.TopQueries[0].Calls != 41200 || !hydra.StackRSS.OK {
		t.Errorf("hydra top queries %d, stack %+v", len(hydra.TopQueries), hydra.StackRSS)
	}
	kc := r.Resources[byName["keycloak"]]
	if kc.IdPSource != "process:keycloak" || !kc.IdPRSS.OK || kc.DBRSS.OK || kc.DBRSS.NA != "no postgres samples" {
		t.Errorf("keycloak source %q, IdP %+v, DB %+v", kc.IdPSource, kc.IdPRSS, kc.DBRSS)
	}
	if z := r.Resources[byName["zitadel"]]; z.NA == "" || z.IdPRSS.OK {
		t.Errorf("zitadel %+v, want N/A", z)
	}
	if j := r.Jitter[byName["hydra"]]; j.NA != "" || j.P99.N != 5 || len(j.Gaps) != 1 {
		t.Errorf("hydra jitter %+v, want 5 intervals and one gap", j)
	}
	if c := r.Cold[byName["keycloak"]]; c.A.NA != "" || !strings.Contains(c.B.NA, "status error") {
		t.Errorf("keycloak cold starts %+v", c)
	}
}
