package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pilotFactors are the windows of an invocation of pilotRuns, as shares of
// its level.
var pilotFactors = []float64{0.99, 0.995, 1, 1, 1.005, 1.01}

// pilotRuns writes, for invocations 1..len(levels), a run directory with
// hydra's fixture meta and a window of discovery at c=8 per pilotFactors,
// at the invocation's level times the factor; it returns their parent.
func pilotRuns(t *testing.T, levels ...float64) string {
	t.Helper()
	parent := t.TempDir()
	src := "../model/testdata/run1/hydra"
	meta, err := os.ReadFile(filepath.Join(src, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	step, err := readStep(filepath.Join(src, "discovery-c8.json"))
	if err != nil {
		t.Fatal(err)
	}
	start := step.Start
	for i, level := range levels {
		dir := filepath.Join(parent, invocationID(i+1), "hydra")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		for k, f := range pilotFactors {
			s := *step
			s.QPS, s.Start = level*f, start.Add(time.Duration(i*10+k)*time.Minute)
			s.End = s.Start.Add(step.End.Sub(step.Start))
			s.Labels = map[string]string{"repeat": fmt.Sprint(k + 1)}
			name := "discovery-c8.json"
			if k > 0 {
				name = fmt.Sprintf("discovery-c8-r%d.json", k+1)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return parent
}

// TestInvocationsPilot: four invocations, one of them 30% faster than the
// other three, whose windows agree within 1%: the run tool is called once
// per invocation with the pilot's level, windows and environment;
// windows.tsv has every window; PILOT.md (also on stdout) shows a between
// component far above the within one, a small p, an interval over
// invocations far wider than the one over windows (which the three alike
// invocations hold near 1,000), and Kalibera & Jones's windows per
// invocation.
func TestInvocationsPilot(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUNS_FROM": pilotRuns(t, 1000, 1000, 1300, 1000)})
	v := Invocations{Products: []string{"hydra"}, Scenario: "discovery", Connections: 8, Invocations: 4, Windows: 6, Out: out}
	if err := v.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	calls := readLines(t, filepath.Join(out, "runs", "calls"))
	if len(calls) != 4 || calls[0] != "--only hydra --repeats 6 --run-id inv-1 NO_BUILD=1 LADDER=8" {
		t.Errorf("run tool calls:\n%s", strings.Join(calls, "\n"))
	}
	rows := readLines(t, filepath.Join(out, "windows.tsv"))
	if len(rows) != 1+24 || !strings.HasPrefix(rows[1], "hydra\t1\t1\t990\t") || !strings.HasPrefix(rows[18], "hydra\t3\t6\t1313\t") {
		t.Errorf("windows.tsv:\n%s", strings.Join(rows, "\n"))
	}
	md, err := os.ReadFile(filepath.Join(out, "PILOT.md"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != string(md) {
		t.Errorf("stdout is not PILOT.md:\n%s", stdout.String())
	}
	// ln qps within: about 0.7%; between: about 13%; the windows' interval
	// is within 1% of 1,000, the invocations' reaches towards 1,300.
	row := ""
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "| hydra |") {
			row = l
		}
	}
	f := strings.Split(row, " | ")
	if len(f) != 12 || f[1] != "4 × 6" || f[3] != "0.7%" || f[4] != "13.1%" || f[7] != "-0.2% +0.7%" || f[8] != "-0.2% +29.4%" || f[10] != "1" {
		t.Errorf("PILOT.md's hydra row %q: want 4 × 6 windows, within 0.7%%, between 13.1%%, -0.2%% +0.7%% over windows, -0.2%% +29.4%% over invocations, 1 window per invocation\n%s", row, md)
	}
	// Rerunning keeps the finished invocations.
	log.Reset()
	if err := v.Run(context.Background(), e); err != nil || strings.Count(log.String(), "finished before, kept") != 4 {
		t.Errorf("rerun: %v\n%s", err, log.String())
	}
}

// TestInvocationsPilotOneWindow: a product with one window per invocation
// has no within-invocation variance: its row says why instead of figures.
func TestInvocationsPilotOneWindow(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUN_FROM": fixtureRun(t, "hydra")})
	v := Invocations{Products: []string{"hydra"}, Scenario: "discovery", Connections: 8, Invocations: 2, Windows: 2, Out: out}
	if err := v.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if !strings.Contains(stdout.String(), "| hydra | 2 windows | N/A: 2 invocations, 2 windows: want 2 invocations or more and more windows than invocations |") {
		t.Errorf("PILOT.md:\n%s", stdout.String())
	}
}

func TestInvocationsValidate(t *testing.T) {
	ok := Invocations{Products: []string{"refop"}, Scenario: "discovery", Connections: 8, Invocations: 3, Windows: 3}
	for _, tt := range []struct {
		change func(*Invocations)
		want   string
	}{
		{func(v *Invocations) { v.Products = nil }, "--products"},
		{func(v *Invocations) { v.Scenario = "" }, "--scenario"},
		{func(v *Invocations) { v.Connections = 0 }, "--connections"},
		{func(v *Invocations) { v.Invocations = 1 }, "--invocations wants 2 or more (got 1)"},
		{func(v *Invocations) { v.Windows = 1 }, "--windows wants 2 or more (got 1)"},
	} {
		v := ok
		tt.change(&v)
		if err := v.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", v, err, tt.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}
