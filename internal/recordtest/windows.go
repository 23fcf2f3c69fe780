package recordtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// repeatLevel is one ladder level measured in several windows, one per qps.
type repeatLevel struct {
	scenario string
	c        int
	p50ms    float64
	qps      []float64
	limited  int // 1-based window that was driver-limited; 0 = none
	steal    int // 1-based window with 12% host steal; 0 = none
}

// repeatLevels are hydra's ladders measured with --repeats 5:
// discovery c=32 has a higher median than c=8, but within noise (steady:
// c=8); client_credentials c=32 is significantly higher (steady: c=32);
// userinfo's only level has windows 12% apart (unstable), its slowest
// window measured under 12% host steal.
func repeatLevels() []repeatLevel {
	return []repeatLevel{
		{"discovery", 2, 0.45, []float64{2000, 2010, 1990, 2020, 1980}, 0, 0},
		{"discovery", 8, 0.6, []float64{4000, 4200, 3900, 4100, 4040}, 0, 0},
		{"discovery", 32, 1.9, []float64{4060, 3980, 4160, 4220, 4080}, 0, 0},
		{"discovery", 64, 3.8, []float64{4300, 4310, 4290, 4320, 4280}, 3, 0}, // never steady: one window driver-limited
		{"client_credentials", 8, 18, []float64{400, 402, 398, 401, 399}, 0, 0},
		{"client_credentials", 32, 70, []float64{440, 442, 438, 441, 439}, 0, 0},
		{"userinfo", 4, 1.2, []float64{3000, 3300, 3350, 3400, 3360}, 0, 1},
	}
}

// RepeatsPerRound is how many windows a round of Repeats has (a window a
// level).
func RepeatsPerRound() int { return len(repeatLevels()) }

// RepeatsSampler is the path Repeats' sampler records are read as.
const RepeatsSampler = "testdata/repeats/hydra/sampler.jsonl"

// Repeats are the steps of repeatLevels, round-major as
// run-comparison.sh --repeats runs them (every ladder once, then again), and
// one sampler record in the middle of every window (RepeatsSampler's).
func Repeats(t *testing.T) (records []steps.File, samples []schema.Sample) {
	t.Helper()
	at := FixtureStart
	for k := range 5 {
		for i, l := range repeatLevels() {
			name := fmt.Sprintf("repeats/hydra/%s-c%d.json", l.scenario, l.c)
			if k > 0 {
				name = strings.TrimSuffix(name, ".json") + fmt.Sprintf("-r%d.json", k+1)
			}
			sp := stepSpec{file: name, product: "hydra", version: "v2.3.0", scenario: l.scenario, target: HydraURL(l.scenario),
				c: l.c, qps: l.qps[k], p50ms: l.p50ms, sigma: 0.35, phase: steps.PhaseLadder, start: at, limited: l.limited == k+1}
			s := synthStep(t, sp, uint64(100*k+i))
			s.Labels["repeat"] = fmt.Sprint(k + 1)
			if l.steal == k+1 {
				s.Driver.HostStealPct = new(12.0)
			}
			records = append(records, steps.File{Path: "testdata/" + name, Step: s})
			samples = append(samples, schema.Sample{Schema: schema.SampleV1, T: at.Add(5 * time.Second), Source: "process:hydra",
				RSSBytes: 80 << 20, CPUPct: 50, Threads: 14, Processes: 1})
			if l.scenario == "userinfo" { // the host probe: the window under steal ran 15% slower
				probe := 2000.0
				if l.steal == k+1 {
					probe = 2300
				}
				samples = append(samples, schema.Sample{Schema: schema.SampleV1, T: at.Add(5 * time.Second), Source: "host",
					CPUPct: 90, ProbeUS: new(probe)})
			}
			at = at.Add(20 * time.Second)
		}
	}
	return records, samples
}

// RoundStep is a complete window of product p's scenario in round k at
// qps (label repeat=k), a twin's with twin.
func RoundStep(p, scenario string, k int, qps float64, twin bool) steps.File {
	phase := steps.PhaseLadder
	if twin {
		phase = steps.PhaseTwin
	}
	s := &schema.Step{Product: p, Scenario: scenario, Check: schema.ScenarioCheck(scenario), Connections: 8, Status: schema.StatusComplete,
		Requests: int64(qps * 3), OK: int64(qps * 3), QPS: qps, Start: time.Unix(int64(1000*k), 0), End: time.Unix(int64(1000*k+3), 0),
		Labels: map[string]string{"phase": phase, "repeat": strconv.Itoa(k)}}
	return steps.File{Path: p + "/" + scenario + "-c8-r" + strconv.Itoa(k) + ".json", Step: s}
}

// ShareStep is a complete rate-mode window of seconds one-second
// intervals, each with latencies (ms) lat(second, i) for i < perSecond.
func ShareStep(t *testing.T, start time.Time, seconds, perSecond int, lat func(sec, i int) float64) *schema.Step {
	t.Helper()
	all := schema.NewHistogram()
	s := &schema.Step{Schema: schema.StepV1, Scenario: schema.ScenarioDiscovery, Product: "p", Status: schema.StatusComplete,
		Check: schema.ScenarioCheck(schema.ScenarioDiscovery), RateRPS: float64(perSecond), Start: start, End: start.Add(time.Duration(seconds) * time.Second),
		Requests: int64(seconds * perSecond), OK: int64(seconds * perSecond), Labels: map[string]string{"phase": steps.PhaseShare, "share": "50"}}
	for sec := range seconds {
		h := schema.NewHistogram()
		for i := range perSecond {
			v := int64(lat(sec, i) * 1e6)
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if err := all.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := schema.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		s.Intervals = append(s.Intervals, schema.Interval{TS: float64(sec), LengthS: 1, Requests: int64(perSecond), CorrectedHistogram: enc,
			CorrectedP50MS: schema.Summarize(h).P50})
	}
	enc, err := schema.EncodeHistogram(all)
	if err != nil {
		t.Fatal(err)
	}
	s.CorrectedHistogram = enc
	return s
}
