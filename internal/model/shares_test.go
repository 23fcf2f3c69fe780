package model

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
)

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
	a, b := recordtest.ShareStep(t, t0, 10, 100, flat), recordtest.ShareStep(t, t0.Add(time.Minute), 10, 100, slow)
	same := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "a2", Step: recordtest.ShareStep(t, t0.Add(time.Minute), 10, 100, flat)}}, "k")
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
	short := shareLatency(50, []StepFile{{Path: "s", Step: recordtest.ShareStep(t, t0, 5, 100, flat)}}, "k")
	if short.NA != "" || short.P99.OK() || !strings.Contains(short.P99.NA, "5 seconds, no 95% interval: needs 10") || short.P99.Center == 0 {
		t.Errorf("5 seconds: %+v, want the figure without an interval", short.P99)
	}
	other := recordtest.ShareStep(t, t0, 10, 100, flat)
	other.Check = "2xx"
	if sl := shareLatency(50, []StepFile{{Path: "a", Step: a}, {Path: "o", Step: other}}, "k"); !strings.Contains(sl.NA, `a window judged by "2xx", not the scenario's rule`) {
		t.Errorf("a window judged by another rule: NA %q", sl.NA)
	}
	bad := recordtest.ShareStep(t, t0, 10, 100, flat)
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
		s := recordtest.ShareStep(t, t0, 10, 100, lat)
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
	if sl := c.At(50); sl == nil || !sl.Sustained || sl.NA != "" || sl.P99.Center <= 0 {
		t.Errorf("50%%: %+v, want sustained with a latency", sl)
	}
	// Nothing sustained below: the search's outcome.
	r = &Report{Cells: []Cell{{Product: "p", Scenario: schema.ScenarioInfo{ID: "S1", Name: schema.ScenarioDiscovery}, Capacity: Capacity{Raw: Interval{Center: 1000}}}},
		Other:    []StepFile{at(50, false, queue), at(80, false, queue), at(41, true, queue)},
		Searches: []SearchFile{{Search: &schema.Search{Product: "p", Scenario: schema.ScenarioDiscovery, Below: 50, Tried: []int{41}, Outcome: schema.SearchExhausted, Why: "not sustained at 41% either"}}}}
	r.shares()
	if c := r.Cells[0]; c.Search == nil || c.Search.Outcome != schema.SearchExhausted || c.At(80) == nil || !c.At(80).Unsustained || c.At(41) == nil || c.At(41).Sustained {
		t.Errorf("nothing sustained: search %+v, 80%% %+v, 41%% %+v; want the search's outcome on the cell, both not sustained", c.Search, c.At(80), c.At(41))
	}
}
