package sustaincheck

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// window is a rate-mode step at share percent whose intervals' corrected
// P50 are p50 (ms), one a second.
func window(product string, share int, search bool, recorded *schema.Sustain, p50 ...float64) model.StepFile {
	s := &schema.Step{Scenario: schema.ScenarioDiscovery, Product: product, RateRPS: 100, Sustain: recorded,
		Labels: map[string]string{"phase": steps.PhaseShare, "share": strconv.Itoa(share)}}
	if search {
		s.Labels["search"] = "1"
	}
	for i, v := range p50 {
		s.Intervals = append(s.Intervals, schema.Interval{TS: float64(i), LengthS: 1, Requests: 100, CorrectedP50MS: v})
	}
	return model.StepFile{Path: product + "/discovery-share" + strconv.Itoa(share) + ".json", Step: s}
}

var (
	flat  = []float64{2, 2, 3, 2, 2, 3, 2, 2, 2, 3}
	queue = []float64{100, 300, 500, 700, 900, 1100, 1300, 1500, 1700, 1900}
)

const header = "| Scenario | Product | Capacity [95%] | raw [95%] | P99 at 50% [95%] | P99 at 80% [95%] |\n|---|---|--:|--:|--:|--:|\n"
const sharesHeader = "\n### Latency at shares of capacity\n\n| Scenario | Product | Share | Rate | Sustained | P50 ms [95%] | P95 ms [95%] | P99 ms [95%] | Windows | Late |\n|---|---|--:|--:|---|--:|--:|--:|--:|--:|\n"

// TestProblems: a report that prints a latency for a window the rule
// calls not sustained is caught, in either table; one that says "not
// sustained" and falls back to a sustained share passes; a fallback to a
// share not sustained, "not sustained" for a sustained window, and a
// recorded verdict other than the rule's are caught; the rule is applied
// again, not read from the record.
func TestProblems(t *testing.T) {
	in := &model.Inputs{Steps: []model.StepFile{
		window("a", 50, false, nil, flat...), window("a", 80, false, nil, queue...), window("a", 64, true, nil, flat...),
		// b wrote "sustained" for a window whose queue grew.
		window("b", 50, false, &schema.Sustain{Verdict: schema.SustainYes}, flat...), window("b", 80, false, &schema.Sustain{Verdict: schema.SustainYes}, queue...),
	}}
	ws := Windows(in)
	if s := Summarize(ws); s.Windows != 5 || s.NotSustained != 2 || s.Sustained != 3 || s.Disagree != 1 || s.OpenedFlat != 3 {
		t.Fatalf("summary %+v: want 5 windows, 2 not sustained (b's judged again), 1 recorded verdict against the rule", s)
	}
	good := header +
		"| S1 discovery | a | 1,000 | – | 3.1 | not sustained (800/s); 64%: 3.3 [2.9, 4.0] |\n" +
		"| S1 discovery | b | 1,000 | – | 3.0 | not sustained (800/s); 50%: 3.0 |\n" +
		sharesHeader +
		"| S1 discovery | a | 80% | 800 / 600/s | **no**: ... | N/A: not sustained | – | – | 1 (10) | – |\n" +
		"| S1 discovery | a | 64% (search) | 640 / 640/s | yes | 2.0 | 2.5 | 3.3 | 1 (10) | 0 |\n"
	probs := Problems(good, ws)
	if len(probs) != 1 || !strings.Contains(probs[0], "recorded sustained, the rule judges not_sustained") {
		t.Errorf("problems of a report that respects the rule: %q; want only b's recorded verdict", probs)
	}
	for _, tc := range []struct{ name, md, want string }{
		{"a queue printed as a latency", strings.Replace(good, "not sustained (800/s); 64%: 3.3 [2.9, 4.0]", "1,900 [1,700, 2,000]", 1), "a discovery: P99 at 80% is \"1,900"},
		{"the shares table", strings.Replace(good, "N/A: not sustained | – | –", "1,500 | 1,800 | 1,900", 1), "the shares table shows a P99 of \"1,900\""},
		{"a fallback not sustained", strings.Replace(good, "64%: 3.3", "80%: 3.3", 1), "falls back to 80%"},
		{"not sustained said of a sustained window", strings.Replace(good, "| 3.1 |", "| not sustained (500/s); none |", 1), "a discovery: P99 at 50% says"},
	} {
		probs := Problems(tc.md, ws)
		if !strings.Contains(strings.Join(probs, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one containing %q", tc.name, probs, tc.want)
		}
	}
}

// TestEdgeSeconds: the first and last second of a window of half-second
// intervals, each two intervals' corrected histograms merged.
func TestEdgeSeconds(t *testing.T) {
	var ivs []schema.Interval
	for i, ms := range []float64{100, 300, 5, 5, 5, 5, 2, 4} {
		h := schema.NewHistogram()
		for range 10 {
			if err := h.RecordValue(int64(ms * 1e6)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := schema.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		ivs = append(ivs, schema.Interval{TS: float64(i) / 2, LengthS: 0.5, Requests: 10, CorrectedHistogram: enc, CorrectedP50MS: ms})
	}
	first, last := edgeSeconds(ivs)
	if first < 99 || first > 101 || last < 1.99 || last > 2.01 {
		t.Errorf("first %g ms, last %g ms; want the P50 of each second's 20 requests: 100, 2", first, last)
	}
}
