package report

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"

	"github.com/idpbench/idpbench/internal/steps"
)

// shareStep is a complete rate-mode window of seconds one-second
// intervals, each with latencies (ms) lat(second, i) for i < perSecond.
func shareStep(t *testing.T, start time.Time, seconds, perSecond int, lat func(sec, i int) float64) *schema.Step {
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

// TestShareLatency: the figures are the merged windows' percentiles; the
// interval lies around them, is the same every time (seeded), widens when
// the windows differ from each other (the bootstrap draws windows, not
// only seconds), and is missing below 10 seconds; a window that does not
// qualify makes the share N/A with its reason.
func TestShareLatency(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	// Latency rises through each second: 1 ms + i/100 ms; window b is 30% slower.
	flat := func(sec, i int) float64 { return 1 + float64(i)/100 }
	slow := func(sec, i int) float64 { return 1.3 * (1 + float64(i)/100) }
	a, b := shareStep(t, t0, 10, 100, flat), shareStep(t, t0.Add(time.Minute), 10, 100, slow)
	same := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "a2", Step: shareStep(t, t0.Add(time.Minute), 10, 100, flat)}}, "k")
	mixed := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "b", Step: b}}, "k")
	for _, sl := range []ShareLatency{same, mixed} {
		if sl.NA != "" || sl.Seconds != 20 || sl.RateRPS != 100 || sl.QPS != 100 {
			t.Fatalf("share: NA %q, %d seconds, rate %g, qps %g; want figures from 20 seconds at 100/s", sl.NA, sl.Seconds, sl.RateRPS, sl.QPS)
		}
		for _, iv := range []Interval{sl.P50, sl.P95, sl.P99} {
			if !iv.OK() || !(iv.Lo <= iv.Center*1.011 && iv.Center <= iv.Hi*1.011) {
				t.Errorf("interval %+v does not hold its center (to the grid's 1%%)", iv)
			}
		}
	}
	if same.P99.Center < 1.97 || same.P99.Center > 2.0 {
		t.Errorf("P99 of two identical windows = %g ms, want about 1.99", same.P99.Center)
	}
	if w1, w2 := same.P99.HalfPct(), mixed.P99.HalfPct(); !(w2 > 3*w1 && w2 > 5) {
		t.Errorf("P99 interval ±%.1f%% for identical windows, ±%.1f%% for windows 30%% apart: want the second far wider", w1, w2)
	}
	if again := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "b", Step: b}}, "k"); again.P99 != mixed.P99 {
		t.Errorf("seeded: %+v then %+v", mixed.P99, again.P99)
	}
	short := shareLatency(50, []StepFile{{Path: "s", Step: shareStep(t, t0, 5, 100, flat)}}, "k")
	if short.NA != "" || short.P99.OK() || !strings.Contains(short.P99.NA, "5 seconds, no 95% interval: needs 10") || short.P99.Center == 0 {
		t.Errorf("5 seconds: %+v, want the figure without an interval", short.P99)
	}
	other := shareStep(t, t0, 10, 100, flat)
	other.Check = "2xx"
	if sl := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "o", Step: other}}, "k"); !strings.Contains(sl.NA, `a window judged by "2xx", not the scenario's rule`) {
		t.Errorf("a window judged by another rule: NA %q", sl.NA)
	}
	bad := shareStep(t, t0, 10, 100, flat)
	bad.ErrorRate = 0.01
	if sl := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "bad", Step: bad}}, "k"); !strings.Contains(sl.NA, "errors 1% in a window") {
		t.Errorf("a window with 1%% errors: NA %q", sl.NA)
	}
}

// TestSharesSustained: a share whose window was not sustained has no
// latency (its NA says so, with its rate and the rule's figures); the main
// table shows it with the P99 at the highest share below it that was
// sustained, that share printed beside it, a search window's included; a
// cell with none says why (the search's outcome).
func TestSharesSustained(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	flat := func(sec, i int) float64 { return 2 + float64(i)/100 }
	queue := func(sec, i int) float64 { return 50 + 200*float64(sec) + float64(i)/10 } // 200 ms more every second
	at := func(share int, search bool, lat func(sec, i int) float64) StepFile {
		s := shareStep(t, t0, 10, 100, lat)
		s.RateRPS = float64(10 * share)
		s.Labels["share"] = strconv.Itoa(share)
		if search {
			s.Labels["search"] = "1"
		}
		return StepFile{Path: fmt.Sprintf("p/discovery-share%d.json", share), Step: s}
	}
	r := &Report{Cells: []Cell{{Product: "p", Scenario: schema.ScenarioInfo{ID: "S1", Name: schema.ScenarioDiscovery}, Capacity: Capacity{Raw: Interval{Center: 1000}}}},
		Other: []StepFile{at(50, false, flat), at(80, false, queue), at(64, true, flat)}}
	r.shares()
	c := r.Cells[0]
	if sl := c.At(80); sl == nil || sl.Sustained || !sl.Unsustained || !strings.HasPrefix(sl.NA, "not sustained at 800/s (80% of capacity): its queue grew 200 ms a second") {
		t.Fatalf("80%%: %+v, want not sustained, no latency, the reason with its figures", sl)
	}
	if sl := c.At(64); sl == nil || !sl.Sustained || !sl.Search || sl.NA != "" || sl.P99.Center <= 0 {
		t.Errorf("64%% (search): %+v, want sustained, marked search, with a latency", sl)
	}
	if got, want := shareP99(c, 80), "not sustained (800/s); 64%: "+FormatInterval(c.At(64).P99, steps.FormatMS, ""); got != want {
		t.Errorf("main table at 80%%: %q, want %q", got, want)
	}
	if got := shareP99(c, 50); strings.Contains(got, "sustained") || got == "–" {
		t.Errorf("main table at 50%%: %q, want its own figure", got)
	}
	// Nothing sustained below: the search's outcome.
	r = &Report{Cells: []Cell{{Product: "p", Scenario: schema.ScenarioInfo{ID: "S1", Name: schema.ScenarioDiscovery}, Capacity: Capacity{Raw: Interval{Center: 1000}}}},
		Other:    []StepFile{at(50, false, queue), at(80, false, queue), at(41, true, queue)},
		Searches: []SearchFile{{Search: &schema.Search{Product: "p", Scenario: schema.ScenarioDiscovery, Below: 50, Tried: []int{41}, Outcome: schema.SearchExhausted, Why: "not sustained at 41% either"}}}}
	r.shares()
	if got := shareP99(r.Cells[0], 80); got != "not sustained (800/s); none sustained below: not sustained at 41% either" {
		t.Errorf("main table at 80%% with nothing sustained: %q", got)
	}
}
