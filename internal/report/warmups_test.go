package report

import (
	"bufio"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

func TestWarmupsStateTheRuleAndWhatEachScenarioSpent(t *testing.T) {
	rule := &schema.WarmupRule{MinS: 3, MaxS: 60, StableIntervals: 3, TolerancePct: 5}
	yes, no := true, false
	step := func(w float64, stable *bool) model.LadderStep {
		return model.LadderStep{StepFile: model.StepFile{Step: &schema.Step{WarmupS: w, IntervalS: 1, WarmupRule: rule, WarmupStable: stable}}}
	}
	disc, _ := schema.LookupScenario(schema.ScenarioDiscovery)
	cc, _ := schema.LookupScenario(schema.ScenarioClientCredentials)
	r := &model.Report{Cells: []model.Cell{
		{Product: "keycloak", Scenario: disc, Ladder: []model.LadderStep{step(41.2, &yes), step(4, &yes), step(4.04, &yes)},
			Warmup: steps.SpreadOf([]float64{41.2, 4, 4.04})},
		{Product: "keycloak", Scenario: cc, Ladder: []model.LadderStep{step(60, &no), step(5, &yes)}, Warmup: steps.SpreadOf([]float64{60, 5})},
		{Product: "hydra", Scenario: disc, Ladder: []model.LadderStep{step(3, &yes)}, Warmup: steps.SpreadOf([]float64{3})},
	}}
	var b strings.Builder
	m := &md{w: bufio.NewWriter(&b), r: r}
	m.warmups("keycloak")
	m.w.Flush()
	got := b.String()
	for _, want := range []string{
		"- Warmup rule: at least 3 s, then until the throughput of the last 3 intervals of 1 s is each within ±5% of their mean, at most 60 s\n",
		"  - S1 discovery: 4 s–41.2 s, median 4 s over 3 steps; every one ended stable\n",
		"  - S2 client_credentials: 5 s–60 s, median 32.5 s over 2 steps; 1 of 2 ended at the cap (not stable)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warmups lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hydra") || strings.Count(got, "Warmup rule") != 1 {
		t.Errorf("another product's steps or the rule twice:\n%s", got)
	}
}

// TestWarmupsStateTheJIT: a rule that waits for the JIT says so, and a
// scenario whose steps read a JIT states how busy it was in the windows;
// steps without a JIT (a Go product) add nothing.
func TestWarmupsStateTheJIT(t *testing.T) {
	rule := &schema.WarmupRule{MinS: 3, MaxS: 60, StableIntervals: 3, TolerancePct: 10, JITMaxPct: 20}
	yes := true
	step := func(w float64, jit *schema.StepJIT) model.LadderStep {
		return model.LadderStep{StepFile: model.StepFile{Step: &schema.Step{WarmupS: w, IntervalS: 1, WarmupRule: rule, WarmupStable: &yes, JIT: jit}}}
	}
	pct := func(v float64) *schema.StepJIT { return &schema.StepJIT{PID: 7, WindowPct: &v} }
	disc, _ := schema.LookupScenario(schema.ScenarioDiscovery)
	cc, _ := schema.LookupScenario(schema.ScenarioClientCredentials)
	r := &model.Report{Cells: []model.Cell{
		{Product: "keycloak", Scenario: disc, Ladder: []model.LadderStep{step(60, pct(35)), step(4, pct(2)), step(4, pct(6))},
			Warmup: steps.SpreadOf([]float64{60, 4, 4}), JIT: steps.SpreadOf([]float64{35, 2, 6})},
		{Product: "keycloak", Scenario: cc, Ladder: []model.LadderStep{step(5, &schema.StepJIT{NA: "no JIT compiler threads"})}, Warmup: steps.SpreadOf([]float64{5})},
	}}
	var b strings.Builder
	m := &md{w: bufio.NewWriter(&b), r: r}
	m.warmups("keycloak")
	m.w.Flush()
	got := b.String()
	for _, want := range []string{
		"of their mean and, where the product has a JIT (a JVM), its compiler threads were busy at most 20% of one core in each, at most 60 s\n",
		"  - S1 discovery: 4 s–60 s, median 4 s over 3 steps; every one ended stable; the JIT compiled 2–35% of a core in the windows, median 6%\n",
		"  - S2 client_credentials: 5 s each, 1 step; every one ended stable\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warmups lack %q:\n%s", want, got)
		}
	}
	// The steady level's windows: one measured while the JIT compiled 35%.
	c := model.Cell{Product: "keycloak", Scenario: disc, Ladder: r.Cells[0].Ladder, SteadyLevel: 0,
		Levels: []model.Level{{Connections: 8, Steps: []int{0, 1, 2}}}}
	if got, want := steadyJITText(c), "; 1 of the 3 steady windows (c=8) was measured while the JIT compiled more than 20% of a core (35%)"; got != want {
		t.Errorf("steadyJITText: %q, want %q", got, want)
	}
	c.Levels[0].Steps = []int{1, 2}
	if got := steadyJITText(c); got != "" {
		t.Errorf("steadyJITText with a quiet JIT: %q", got)
	}
	two := model.Cell{Product: "keycloak", Scenario: disc, Ladder: []model.LadderStep{step(60, pct(35)), step(60, pct(28))},
		SteadyLevel: 0, Levels: []model.Level{{Connections: 8, Steps: []int{0, 1}}}}
	if got, want := steadyJITText(two), "; 2 of the 2 steady windows (c=8) were measured while the JIT compiled more than 20% of a core (35%, 28%)"; got != want {
		t.Errorf("steadyJITText of two busy windows: %q, want %q", got, want)
	}
	if got := warmupRange(steps.SpreadOf([]float64{4.04, 60, 3.1})); got != "3.1–60 s, median 4 s" {
		t.Errorf("warmupRange: %q", got)
	}
	if got := warmupRange(steps.SpreadOf([]float64{5, 5})); got != "5 s" {
		t.Errorf("warmupRange of equal warmups: %q", got)
	}
}
