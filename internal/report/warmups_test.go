package report

import (
	"bufio"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestWarmupsStateTheRuleAndWhatEachScenarioSpent(t *testing.T) {
	rule := &schema.WarmupRule{MinS: 3, MaxS: 60, StableIntervals: 3, TolerancePct: 5}
	yes, no := true, false
	step := func(w float64, stable *bool) LadderStep {
		return LadderStep{StepFile: StepFile{Step: &schema.Step{WarmupS: w, IntervalS: 1, WarmupRule: rule, WarmupStable: stable}}}
	}
	disc, _ := schema.LookupScenario(schema.ScenarioDiscovery)
	cc, _ := schema.LookupScenario(schema.ScenarioClientCredentials)
	r := &Report{Cells: []Cell{
		{Product: "keycloak", Scenario: disc, Ladder: []LadderStep{step(41.2, &yes), step(4, &yes), step(4.04, &yes)}},
		{Product: "keycloak", Scenario: cc, Ladder: []LadderStep{step(60, &no), step(5, &yes)}},
		{Product: "hydra", Scenario: disc, Ladder: []LadderStep{step(3, &yes)}},
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
