package steps

import (
	"math"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// rateStep is a rate-mode window whose one-second intervals had these
// corrected P50s (ms).
func rateStep(p50 ...float64) *schema.Step {
	s := &schema.Step{RateRPS: 100}
	for i, v := range p50 {
		s.Intervals = append(s.Intervals, schema.Interval{TS: float64(i), LengthS: 1, Requests: 100, CorrectedP50MS: v})
	}
	return s
}

func TestSustain(t *testing.T) {
	tests := []struct {
		name string
		s    *schema.Step
		want string
	}{
		// A server slower than the rate: the queue grows every second.
		{"overloaded: 5% short", rateStep(10, 60, 110, 160, 210, 260, 310, 360, 410, 460), schema.SustainNo},
		{"overloaded: 2% short", rateStep(5, 25, 45, 65, 85, 105, 125, 145, 165, 185), schema.SustainNo},
		// results/full-2026-12-06: Keycloak S1 at 80%, the example.
		{"keycloak discovery at 80%", rateStep(812, 967, 1218, 1453, 1838, 2110, 2564, 2883, 3070, 3005), schema.SustainNo},
		// The reference OP's client_credentials at 80%: the queue grew, then stayed.
		{"standing queue", rateStep(46, 105, 252, 454, 540, 573, 616, 547, 490, 632), schema.SustainNo},
		// A whole window on a queue that still grows (Keycloak S3 at 80%).
		{"queued from the start", rateStep(596, 796, 847, 892, 957, 932, 1019, 1123, 1117, 1015), schema.SustainNo},
		// A start-up queue drained, then a queue grew: judged from the lowest second.
		{"drained, then grew", rateStep(300, 100, 20, 20, 40, 80, 120, 160, 200, 240), schema.SustainNo},
		// Room to spare: flat, with noise.
		{"room to spare", rateStep(3, 2, 3, 3, 2, 3, 4, 3, 2, 3), schema.SustainYes},
		{"slow but flat", rateStep(185, 188, 189, 201, 189, 197, 198, 189, 197, 199), schema.SustainYes},
		{"noisy", rateStep(7, 7, 3, 5, 37, 30, 9, 121, 46, 28), schema.SustainYes},
		// A pause of two seconds, then caught up: a real latency, in the P99.
		{"pause in the middle", rateStep(2, 2, 2, 2, 1500, 600, 40, 2, 2, 2), schema.SustainYes},
		{"pause, late catch-up", rateStep(51, 31, 48, 30, 30, 192, 238, 251, 220, 54), schema.SustainYes},
		// A spike in the last second without a trend: no growth.
		{"spike at the end", rateStep(3, 3, 3, 3, 3, 3, 3, 3, 3, 900), schema.SustainYes},
		// A start-up queue that drains: sustained (the warmup's to absorb).
		{"draining", rateStep(662, 742, 529, 334, 369, 296, 280, 311, 199, 65), schema.SustainYes},
		{"too short", rateStep(10, 500, 1000, 1500), schema.SustainNotJudged},
		{"closed loop", &schema.Step{Intervals: rateStep(1, 2, 3, 4, 5, 6).Intervals}, schema.SustainNotJudged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Sustain(tc.s)
			if got.Verdict != tc.want {
				t.Errorf("verdict %s, want %s (%s)", got.Verdict, tc.want, got.Why)
			}
			if got.Rule != SustainRule || got.Why == "" {
				t.Errorf("rule %q, why %q: want the rule and a reason", got.Rule, got.Why)
			}
		})
	}
}

func TestSustainFigures(t *testing.T) {
	got := Sustain(rateStep(10, 60, 110, 160, 210, 260, 310, 360, 410, 460))
	if math.Abs(got.GrowthMSPerS-50) > 1e-9 || got.EndBacklogMS != 450 || got.Intervals != 10 || got.WindowS != 10 {
		t.Errorf("growth %g ms/s, end backlog %g ms, %d intervals over %g s; want 50, 450, 10, 10", got.GrowthMSPerS, got.EndBacklogMS, got.Intervals, got.WindowS)
	}
	// Half-second intervals: the same queue in ms per second.
	s := rateStep()
	for i := range 10 {
		s.Intervals = append(s.Intervals, schema.Interval{TS: float64(i) / 2, LengthS: 0.5, Requests: 50, CorrectedP50MS: 10 + 25*float64(i)})
	}
	if got := Sustain(s); math.Abs(got.GrowthMSPerS-50) > 1e-9 || got.WindowS != 5 || got.Verdict != schema.SustainNo {
		t.Errorf("half-second intervals: growth %g, window %g s, %s; want 50, 5, %s", got.GrowthMSPerS, got.WindowS, got.Verdict, schema.SustainNo)
	}
	// Intervals without requests are not read.
	s = rateStep(10, 60, 110, 160, 210, 260)
	s.Intervals[2].Requests = 0
	if got := Sustain(s); got.Intervals != 5 {
		t.Errorf("%d intervals read, want 5 (one had no requests)", got.Intervals)
	}
}

func TestSustained(t *testing.T) {
	s := rateStep(10, 60, 110, 160, 210, 260)
	if got := Sustained(s); got.Verdict != schema.SustainNo {
		t.Errorf("without a recorded verdict: %s, want the rule's %s", got.Verdict, schema.SustainNo)
	}
	s.Sustain = &schema.Sustain{Verdict: schema.SustainYes}
	if got := Sustained(s); got.Verdict != schema.SustainYes {
		t.Errorf("with a recorded verdict: %s, want it (%s)", got.Verdict, schema.SustainYes)
	}
}
