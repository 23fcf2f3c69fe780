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
// those without a steady state, and nothing once the budget cannot hold
// the product's round.
func TestWide(t *testing.T) {
	runDir := t.TempDir()
	writeWindows(t, runDir, "p", schema.ScenarioDiscovery, 8, 1000, 1010, 990, 1005, 995, 1002)           // ±1.1%
	writeWindows(t, runDir, "p", schema.ScenarioUserinfo, 8, 1000, 1300, 800, 1100, 900, 1200)            // ±23.8%
	writeWindows(t, runDir, "p", schema.ScenarioClientCredentials, 8, 1000, 1010, 990)                    // no interval
	writeWindows(t, runDir, "other", schema.ScenarioIntrospect, 8, 1000, 1300, 800, 1100, 900, 1200, 950) // not p's
	now := time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC)
	var log strings.Builder
	r := &runner{runDir: runDir, roundS: map[string]float64{"p": 300}, log: cli.Logger{W: &log, Tag: "run"},
		env:    Env{Now: func() time.Time { return now }, Started: now.Add(-1000 * time.Second), Getenv: func(string) string { return "" }},
		closed: map[string]bool{"done": true}, out: map[string]bool{"na": true}}
	r.Products = []string{"p", "q", "done", "na"} // p and q still to close: 2 x (60 + 40) s
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
	r.Precision.BudgetS = 1499 // 1000 s elapsed + a 300 s round + 200 s closing
	if got := r.wide(context.Background(), "p", 4); got != nil {
		t.Errorf("over the budget: wide = %v, want none", got)
	}
	if !strings.Contains(log.String(), "1000 s elapsed + 300 s (its last round) + 200 s (closing 2 products: shares, GC jitter, down) > the budget of 1499 s") {
		t.Errorf("log does not say why the round was not started:\n%s", log.String())
	}
}
