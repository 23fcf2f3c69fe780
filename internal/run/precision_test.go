package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/schema"
)

// writeWindows writes one step record per qps at c connections of
// scenario s for product p under runDir.
func writeWindows(t *testing.T, runDir, p, s string, c int, qps ...float64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "schema", "testdata", "step-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i, q := range qps {
		var st schema.Step
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		st.Product, st.Scenario, st.Connections, st.QPS, st.Check = p, s, c, q, schema.ScenarioCheck(s)
		st.Start = start.Add(time.Duration(i) * time.Minute)
		st.End = st.Start.Add(10 * time.Second)
		out, err := json.Marshal(&st)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(runDir, p, fmt.Sprintf("%s-c%d-r%d.json", s, c, i+1))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWide: a precision round measures again the scenarios whose capacity
// interval is wider than the bound or missing, not the narrow ones nor
// those without a steady state.
func TestWide(t *testing.T) {
	runDir := t.TempDir()
	writeWindows(t, runDir, "p", schema.ScenarioDiscovery, 8, 1000, 1010, 990, 1005, 995, 1002)           // ±1.1%
	writeWindows(t, runDir, "p", schema.ScenarioUserinfo, 8, 1000, 1300, 800, 1100, 900, 1200)            // ±23.8%
	writeWindows(t, runDir, "p", schema.ScenarioClientCredentials, 8, 1000, 1010, 990)                    // no interval
	writeWindows(t, runDir, "other", schema.ScenarioIntrospect, 8, 1000, 1300, 800, 1100, 900, 1200, 950) // not p's
	var log strings.Builder
	r := &runner{runDir: runDir, log: cli.Logger{W: &log, Tag: "run"}, env: Env{Getenv: func(string) string { return "" }}}
	r.Scenarios = []string{schema.ScenarioDiscovery, schema.ScenarioClientCredentials, schema.ScenarioIntrospect, schema.ScenarioUserinfo}
	r.Precision = Precision{Rounds: 2, Pct: 5, BudgetS: 1500}
	got := r.wide(context.Background(), "p", 4)
	if want := []string{schema.ScenarioClientCredentials, schema.ScenarioUserinfo}; !slices.Equal(got, want) {
		t.Errorf("wide = %v, want %v; log:\n%s", got, want, log.String())
	}
	for _, s := range []string{"discovery ±1.1% (6 windows)", "client_credentials 3 windows, no 95% interval: needs 6: again", "userinfo ±23.8% (6 windows): again"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
}

// writeRound1 writes product p's round 1 of scenario s: one step at each
// of cs connections with the qps given, and the knee record that lists
// them (later rounds repeat the candidates ladder.Candidates picks).
func writeRound1(t *testing.T, runDir, p, s string, cs []int, qps []float64) {
	t.Helper()
	dir := filepath.Join(runDir, p)
	for i, c := range cs {
		writeWindows(t, runDir, p, s, c, qps[i])
		if err := os.Rename(filepath.Join(dir, fmt.Sprintf("%s-c%d-r1.json", s, c)), ladder.StepPath(dir, s, c, 1)); err != nil {
			t.Fatal(err)
		}
	}
	k := &schema.Knee{Schema: schema.KneeV1, Product: p, Scenario: s, Ladder: cs, Measured: cs, Skipped: []int{}, Reason: "test", NoisePct: 5}
	if err := ladder.WriteKnee(ladder.KneePath(dir, s), k); err != nil {
		t.Fatal(err)
	}
}

// TestPlan: a round after the first is decided for every open product at
// once, scenario by scenario in the round's order: a scenario's candidate
// windows at each product's seconds per later window are measured by every
// product while the session's elapsed time, the kept scenarios' cost and
// closing every open product fit the budget, and by none when they do not;
// a round that keeps nothing closes every product. The log gives the
// figures.
func TestPlan(t *testing.T) {
	runDir := t.TempDir()
	// p discovery: c=8 best, c=4 within 10% below it (2 candidates); the others c=8 alone.
	writeRound1(t, runDir, "p", schema.ScenarioDiscovery, []int{4, 8, 16}, []float64{950, 1000, 980})
	writeRound1(t, runDir, "p", schema.ScenarioUserinfo, []int{4, 8, 16}, []float64{500, 1000, 700})
	writeRound1(t, runDir, "q", schema.ScenarioDiscovery, []int{4, 8, 16}, []float64{500, 1000, 700})
	now := time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC)
	var log strings.Builder
	// Every round-1 step: warmup 5 s + window 10 s. p's ladders took 20 s a
	// window (5 s of overhead: 20 s a later window), q's 15 s (none: 15 s).
	r := &runner{runDir: runDir, log: cli.Logger{W: &log, Tag: "run"},
		env:     Env{Now: func() time.Time { return now }, Started: now.Add(-1000 * time.Second), Getenv: func(string) string { return "" }},
		ladderS: map[string]float64{"p": 200, "q": 150}, ladderN: map[string]int{"p": 10, "q": 10},
		closed: map[string]bool{"done": true}, out: map[string]bool{"na": true}}
	r.Products = []string{"p", "q", "done", "na"}
	r.Scenarios = []string{schema.ScenarioDiscovery, schema.ScenarioUserinfo} // q has no userinfo: no window
	r.Repeats = 2
	if got := r.laterWindowS("p"); got != 20 {
		t.Errorf("p's seconds per later window: %g, want 20", got)
	}
	reserve := int(r.closeReserveS(context.Background()))
	both := []string{schema.ScenarioDiscovery, schema.ScenarioUserinfo}
	// discovery: p 2 x 20 s + q 1 x 15 s = 55 s; userinfo: p 1 x 20 s.
	for _, c := range []struct {
		name         string
		room         int
		wantP, wantQ []string
		closeAll     bool
		log          string
	}{
		{"all fit", 75, both, both, false, fmt.Sprintf("round 2 fits the budget: 1000 s elapsed + 75 s (its 4 windows at each product's seconds per window) + %d s (closing 2 products", reserve)},
		{"userinfo left out", 74, []string{schema.ScenarioDiscovery}, []string{schema.ScenarioDiscovery}, false,
			fmt.Sprintf("round 2 measures discovery for every product: 1000 s elapsed + 55 s (its 3 windows at each product's seconds per window) + %d s (closing 2 products: shares, GC jitter, down) <= %d s (IDPBENCH_BUDGET_S); left out for every product, over the budget: userinfo (1 windows, 20 s)", reserve, 1074+reserve)},
		{"discovery left out", 54, []string{schema.ScenarioUserinfo}, []string{schema.ScenarioUserinfo}, false, "left out for every product, over the budget: discovery (3 windows, 55 s)"},
		{"nothing fits", 19, nil, nil, true, fmt.Sprintf("round 2 not started for any product: 1000 s elapsed + 0 s (its 0 windows at each product's seconds per window) + %d s (closing 2 products: shares, GC jitter, down) with any of discovery (3 windows, 55 s), userinfo (1 windows, 20 s) > the budget of %d s (IDPBENCH_BUDGET_S): every product closes now", reserve, 1019+reserve)},
	} {
		log.Reset()
		r.Precision = Precision{Rounds: 1, Pct: 5, BudgetS: 1000 + c.room + reserve}
		plan, closeAll := r.plan(context.Background(), 2, r.Products)
		if closeAll != c.closeAll || !slices.Equal(plan["p"], c.wantP) || !slices.Equal(plan["q"], c.wantQ) {
			t.Errorf("%s: plan %v, close all %v; want p %v, q %v, close all %v; log:\n%s", c.name, plan, closeAll, c.wantP, c.wantQ, c.closeAll, log.String())
		}
		if !strings.Contains(log.String(), c.log) {
			t.Errorf("%s: log lacks %q:\n%s", c.name, c.log, log.String())
		}
	}
	r.Precision.BudgetS = 0 // no budget: every scenario, every product
	if plan, closeAll := r.plan(context.Background(), 2, r.Products); closeAll || !slices.Equal(plan["p"], both) || !slices.Equal(plan["q"], both) {
		t.Errorf("no budget: plan %v, close all %v", plan, closeAll)
	}
}
