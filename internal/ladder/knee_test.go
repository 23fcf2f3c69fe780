package ladder

import (
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// lvl is one round-1 level: connections, qps and P99 (ms).
type lvl struct {
	c        int
	qps, p99 float64
}

func mk(ls ...lvl) []*schema.Step {
	var out []*schema.Step
	for _, l := range ls {
		out = append(out, &schema.Step{Scenario: schema.ScenarioUserinfo, Check: schema.CheckSub,
			Status: schema.StatusComplete, Connections: l.c, QPS: l.qps, Requests: int64(10 * l.qps), LatencyMS: schema.Latency{P99: l.p99}})
	}
	return out
}

// with returns steps after f changed the step at c connections.
func with(steps []*schema.Step, c int, f func(*schema.Step)) []*schema.Step {
	for _, s := range steps {
		if s.Connections == c {
			f(s)
		}
	}
	return steps
}

var (
	monotone = mk(lvl{2, 100, 1}, lvl{4, 200, 1.1}, lvl{8, 400, 1.2}, lvl{16, 800, 1.5},
		lvl{32, 1600, 2}, lvl{64, 3200, 4}, lvl{128, 6400, 9})
	flatFrom8 = mk(lvl{2, 500, 1}, lvl{4, 1000, 1.2}, lvl{8, 2000, 2}, lvl{16, 2050, 4},
		lvl{32, 2080, 8}, lvl{64, 2090, 16}, lvl{128, 2100, 32})
)

func TestFirstKnee(t *testing.T) {
	tests := []struct {
		name   string
		steps  []*schema.Step
		wantK  int // levels measured when it stops; 0 = never
		reason string
	}{
		{"a monotone ladder never stops early", monotone, 0, "c=64 added 100% to c=32's 1,600 qps"},
		{"flat from c=8: stops after c=32", flatFrom8, 5, "c=16 and c=32 added < 5% to c=8's 2,000 qps while P99 rose 2.00 -> 8.00 ms"},
		{"P99 not growing does not stop", mk(lvl{2, 500, 1}, lvl{4, 1000, 1}, lvl{8, 2000, 1}, lvl{16, 2010, 1},
			lvl{32, 2020, 0.9}, lvl{64, 2030, 1}), 0, "c=32 and c=64 added < 5% to c=16's 2,010 qps but P99 did not rise (1.00 -> 1.00 ms)"},
		{"errors beyond the knee count as no gain", with(with(mk(lvl{2, 500, 1}, lvl{4, 1000, 1.2}, lvl{8, 2000, 2},
			lvl{16, 4000, 3}, lvl{32, 9000, 9}, lvl{64, 9500, 20}), 32, func(s *schema.Step) { s.ErrorRate = 0.02 }),
			64, func(s *schema.Step) { s.ErrorRate = 0.3 }),
			6, "c=32 (2% errors) and c=64 (30% errors) added < 5% to c=16's 4,000 qps while P99 rose 3.00 -> 20.0 ms"},
		{"a driver-limited and an interrupted level count as no gain", with(with(mk(lvl{2, 500, 1}, lvl{4, 1000, 1.2},
			lvl{8, 3000, 5}, lvl{16, 3100, 7}), 8, func(s *schema.Step) { s.Driver.Limited = true }),
			16, func(s *schema.Step) { s.Status = schema.StatusInterrupted }),
			4, "c=8 (driver-limited) and c=16 (interrupted) added < 5% to c=4's 1,000 qps while P99 rose 1.20 -> 7.00 ms"},
		{"another success rule counts as no gain", with(mk(lvl{2, 500, 1}, lvl{4, 1000, 1.2}, lvl{8, 1020, 2},
			lvl{16, 5000, 3}), 16, func(s *schema.Step) { s.Check = schema.CheckIssuer }),
			4, `c=8 and c=16 (judged by "2xx json issuer", not "2xx json sub") added < 5% to c=4's 1,000 qps`},
		{"never before 3 levels", mk(lvl{2, 500, 1}, lvl{4, 400, 9}), 0, "2 of the 3 levels the rule needs at least"},
		{"3 flat levels stop", mk(lvl{2, 500, 1}, lvl{4, 510, 2}, lvl{8, 505, 3}), 3, "c=4 and c=8 added < 5% to c=2's 500 qps"},
		{"a gain of exactly the noise is a gain", mk(lvl{2, 1000, 1}, lvl{4, 1000, 2}, lvl{8, 1050, 3}), 0, "c=8 added 5% to c=2's 1,000 qps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, d := FirstKnee(tc.steps, DefaultNoisePct, 2)
			if k != tc.wantK || d.Stop != (k > 0) || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("FirstKnee = %d %+v, want %d and a reason with %q", k, d, tc.wantK, tc.reason)
			}
			// The rule stops at k and at no prefix before it.
			for n := 1; n < len(tc.steps) && (k == 0 || n < k); n++ {
				if d := Knee(tc.steps[:n], DefaultNoisePct, 2); d.Stop {
					t.Errorf("Knee stops after %d levels: %s", n, d.Reason)
				}
			}
		})
	}
}

// TestKneeOneFlatLevel: with flat 1 (the full profile's level search) the
// rule stops at the first level after the third that adds less than the
// noise while its P99 rises, a level earlier than with 2.
func TestKneeOneFlatLevel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  []*schema.Step
		wantK  int
		reason string
	}{
		{"flat from c=8: stops after c=16", flatFrom8, 4, "c=16 added < 5% to c=8's 2,000 qps while P99 rose 2.00 -> 4.00 ms"},
		{"a monotone ladder never stops early", monotone, 0, "c=128 added 100% to c=64's 3,200 qps"},
		{"never before 3 levels", mk(lvl{2, 500, 1}, lvl{4, 400, 9}), 0, "2 of the 3 levels the rule needs at least"},
	} {
		k, d := FirstKnee(tc.steps, DefaultNoisePct, 1)
		if k != tc.wantK || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: FirstKnee = %d %+v, want %d and a reason with %q", tc.name, k, d, tc.wantK, tc.reason)
		}
	}
}

func TestKneeNothingSteady(t *testing.T) {
	steps := mk(lvl{2, 500, 1}, lvl{4, 510, 2}, lvl{8, 505, 3})
	for _, s := range steps {
		s.ErrorRate = 0.5
	}
	if d := Knee(steps, DefaultNoisePct, 2); d.Stop || d.Reason != "no level is a steady state yet" {
		t.Errorf("Knee = %+v", d)
	}
}

func TestCandidates(t *testing.T) {
	tests := []struct {
		name   string
		steps  []*schema.Step
		want   []int
		reason string
	}{
		{"flat from c=8: the best and its 2 nearest lower levels within 10%", flatFrom8, []int{32, 64, 128},
			"c=128 has round 1's best qps (2,100); within 10% of it: c=32 (2,080 qps), c=64 (2,090 qps)"},
		{"a round 1 stopped after c=32", flatFrom8[:5], []int{8, 16, 32}, "c=32 has round 1's best qps (2,080)"},
		{"a monotone ladder: the best alone", monotone, []int{128}, "no level with fewer connections is within 10% of it"},
		{"a lower level beyond 10% is not repeated", mk(lvl{2, 800, 1}, lvl{4, 1000, 1}, lvl{8, 880, 2}), []int{4}, ""},
		{"a lower level that is not a steady state is not repeated", with(mk(lvl{2, 990, 1}, lvl{4, 995, 1}, lvl{8, 1000, 2}),
			4, func(s *schema.Step) { s.ConnectErrors.Refused = 1 }), []int{2, 8}, "c=2 (990 qps)"},
		{"the best is steady: errors at a higher qps are not", with(mk(lvl{2, 500, 1}, lvl{4, 1000, 1}, lvl{8, 3000, 2}),
			8, func(s *schema.Step) { s.ErrorRate = 0.1 }), []int{4}, "c=4 has round 1's best qps (1,000)"},
		{"no steady level repeats nothing", with(mk(lvl{2, 500, 1}), 2, func(s *schema.Step) { s.Driver.Limited = true }), nil,
			"no level of round 1 is a steady state: later rounds repeat nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Candidates(tc.steps)
			if !slices.Equal(got, tc.want) || !strings.Contains(why, tc.reason) {
				t.Errorf("Candidates = %v %q, want %v and %q", got, why, tc.want, tc.reason)
			}
		})
	}
}
