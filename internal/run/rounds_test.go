package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// TestRoundCells: an interleaved round measures scenario by scenario (in
// a drawn order), each scenario's products side by side in a drawn order
// of their own, its twin among them (the Twins in turn by the scenario's
// index, the first measured in it); products out, closed or without a
// level in a scenario have no cell there. The draw repeats for a round
// and changes between rounds.
func TestRoundCells(t *testing.T) {
	runDir := t.TempDir()
	for _, p := range []string{"refop", "keycloak", "hydra", "done", "na"} {
		for _, s := range []string{schema.ScenarioDiscovery, schema.ScenarioIntrospect, schema.ScenarioUserinfo} {
			if p == "keycloak" && s == schema.ScenarioUserinfo {
				continue // no level: keycloak has no cell in userinfo, refop is its twin
			}
			writeRound1(t, runDir, p, s, []int{4, 8, 16}, []float64{500, 1000, 700})
		}
	}
	r := &runner{runDir: runDir, closed: map[string]bool{"done": true}, out: map[string]bool{"na": true}}
	r.Products = []string{"refop", "keycloak", "hydra", "done", "na"}
	r.Scenarios = []string{schema.ScenarioDiscovery, schema.ScenarioIntrospect, schema.ScenarioUserinfo}
	r.Twins = []string{"refop", "keycloak"}
	r.Order = Order{Random: true, Seed: 7}
	cells := r.roundCells(2)
	if len(cells) != 4+4+3 { // refop, keycloak, hydra and a twin; userinfo without keycloak
		t.Fatalf("%d cells %v, want 11", len(cells), cells)
	}
	seen := map[string]bool{}
	twins := map[string]string{}
	for i, c := range cells {
		if i > 0 && cells[i-1].scenario != c.scenario && seen[c.scenario] {
			t.Errorf("cells %v: scenario %s is not contiguous", cells, c.scenario)
		}
		seen[c.scenario] = true
		if c.twin {
			twins[c.scenario] = c.product
		}
		if c.product == "done" || c.product == "na" {
			t.Errorf("cell %v of a closed or out product", c)
		}
	}
	// Scenario index 0 starts with refop, 1 with keycloak, 2 with refop.
	if want := map[string]string{schema.ScenarioDiscovery: "refop", schema.ScenarioIntrospect: "keycloak", schema.ScenarioUserinfo: "refop"}; fmt.Sprint(twins) != fmt.Sprint(want) {
		t.Errorf("twins %v, want %v", twins, want)
	}
	if again := r.roundCells(2); fmt.Sprint(again) != fmt.Sprint(cells) {
		t.Errorf("round 2 drawn again: %v, then %v", cells, again)
	}
	differ := false
	for round := 3; round < 8; round++ {
		differ = differ || fmt.Sprint(r.roundCells(round)) != fmt.Sprint(cells)
	}
	if !differ {
		t.Errorf("rounds 3-7 all in round 2's order %v", cells)
	}
}

// TestFits: an interleaved round starts while the session's elapsed time,
// its windows and the closing of every open product fit the budget; the
// first round's windows cost each product's later window with the rounds'
// longer window, later ones the seconds per window measured so far. No
// budget: every round. The log gives the figures.
func TestFits(t *testing.T) {
	runDir := t.TempDir()
	writeRound1(t, runDir, "p", schema.ScenarioDiscovery, []int{4, 8, 16}, []float64{950, 1000, 980})
	now := time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC)
	var log strings.Builder
	// Every round-1 step: warmup 5 s + window 10 s; p's ladders took 20 s
	// a window (5 s of overhead). The rounds' window is 1 s longer than the
	// search's (full profile: 3 s against 2 s): 21 s a window.
	r := &runner{runDir: runDir, log: cli.Logger{W: &log, Tag: "run"},
		env:     Env{Now: func() time.Time { return now }, Started: now.Add(-1000 * time.Second), Getenv: func(k string) string { return map[string]string{"IDPBENCH_ROOT": "/r"}[k] }},
		ladderS: map[string]float64{"p": 200}, ladderN: map[string]int{"p": 10}, closed: map[string]bool{}, out: map[string]bool{}}
	r.Products, r.Scenarios = []string{"p"}, []string{schema.ScenarioDiscovery}
	reserve := int(r.closeReserveS(context.Background()))
	cells := []cell{{"p", schema.ScenarioDiscovery, false}, {"p", schema.ScenarioDiscovery, true}}
	for _, c := range []struct {
		room int
		want bool
		log  string
	}{
		{42, true, fmt.Sprintf("round 2 fits the budget: 1000 s elapsed + 42 s (its 2 windows at 21.0 s each) + %d s (closing 1 products: shares, GC jitter, down) <= %d s", reserve, 1042+reserve)},
		{41, false, fmt.Sprintf("round 2 would pass the budget: 1000 s elapsed + 42 s (its 2 windows at 21.0 s each) + %d s (closing 1 products: shares, GC jitter, down) > %d s (IDPBENCH_BUDGET_S): every product closes now", reserve, 1041+reserve)},
	} {
		log.Reset()
		r.BudgetS = 1000 + c.room + reserve
		if ok, _ := r.fits(context.Background(), 2, cells); ok != c.want || !strings.Contains(log.String(), c.log) {
			t.Errorf("room %d: fits %v, want %v; log lacks %q:\n%s", c.room, ok, c.want, c.log, log.String())
		}
	}
	r.roundS, r.roundN = 30, 4 // 7.5 s a window measured
	log.Reset()
	if _, _ = r.fits(context.Background(), 3, cells); !strings.Contains(log.String(), "15 s (its 2 windows at 7.5 s each)") {
		t.Errorf("after a round: log lacks the measured seconds per window:\n%s", log.String())
	}
	r.BudgetS = 0
	if ok, _ := r.fits(context.Background(), 9, cells); !ok {
		t.Error("no budget: a round did not fit")
	}
}
