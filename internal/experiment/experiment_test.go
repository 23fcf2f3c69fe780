package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/compare"
	"github.com/idpbench/idpbench/internal/schema"
)

func ptr[T any](v T) *T { return &v }

// TestWarmupRow: one step's row of warmups.tsv, as the jq program of
// scripts/warmup-check.sh printed it.
func TestWarmupRow(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 4, 5, 123456789, time.UTC)
	tests := []struct {
		name string
		arm  string
		step schema.Step
		want string
	}{
		{"rule, stable, JIT by 10 s with a short last chunk", ArmRule, schema.Step{Start: start, Connections: 8,
			Labels: map[string]string{"repeat": "3"}, WarmupS: 23.456, WarmupStable: ptr(true), QPS: 1234567.5,
			JIT: &schema.StepJIT{WindowPct: ptr(3.25), WarmupPct: []float64{
				10, 10, 10, 10, 10, 10, 10, 10, 10, 15, // 10.5 -> 11 (half away from zero)
				1, 2, 3, 4, 5, 6, 7, 8, 9, 0, // 4.5 -> 5
				2.4, 2.4}}}, // 2.4 -> 2
			"rule\t2026-12-03T10:04:05.123456789Z\t8\t3\t23.5\ttrue\t1234567.5\t3.25\t11 5 2"},
		{"fixed arm: no repeat label, no JIT", ArmFixed, schema.Step{Start: start, Connections: 2, WarmupS: 59.96,
			WarmupStable: ptr(false), QPS: 812},
			"fixed\t2026-12-03T10:04:05.123456789Z\t2\t1\t60\tfixed\t812\tN/A\t"},
		{"rule without warmup_stable; JIT watched, no window share", ArmRule, schema.Step{Start: start, Connections: 32, WarmupS: 0.04,
			QPS: 0.5, JIT: &schema.StepJIT{NA: "no JVM"}},
			"rule\t2026-12-03T10:04:05.123456789Z\t32\t1\t0\t\t0.5\tN/A\t"},
		{"a window share of 0 is a number", ArmRule, schema.Step{Start: start, Connections: 1, WarmupS: 10.05,
			WarmupStable: ptr(false), QPS: 100, JIT: &schema.StepJIT{WindowPct: ptr(0.0), WarmupPct: []float64{0.4}}},
			"rule\t2026-12-03T10:04:05.123456789Z\t1\t1\t10.1\tfalse\t100\t0\t0"},
	}
	for _, tt := range tests {
		if got := strings.Join(WarmupRow(tt.arm, &tt.step), "\t"); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func row(scenario string, c int, status string, qps, p50, p99 compare.Delta) compare.Row {
	return compare.Row{Product: "oidc", Scenario: scenario, Connections: c, Status: status, QPS: qps, P50: p50, P99: p99}
}

// TestTally: the counts and flagged lines of summary.txt, the expected text
// written by hand from the awk program of scripts/false-alarms.sh for the
// same rows (as their TSV held them; the file named as in the committed
// summaries, relative to DIR).
func TestTally(t *testing.T) {
	sig := func(pct, p float64) compare.Delta {
		return compare.Delta{Pct: pct, P: p, Testable: true, Significant: true}
	}
	not := compare.Delta{Pct: 1.5, P: 0.69, Testable: true}
	pairs := []PairRows{
		{File: "pair-1.window.tsv", Rows: []compare.Row{
			row("discovery", 8, compare.StatusCompared, sig(-6.25, 0.0079), not, sig(12.5, 0.0159)),
			row("introspect", 8, compare.StatusCompared, not, sig(3, 0.03), not),
			// Not compared: neither counted nor flagged, whatever its deltas.
			row("userinfo", 8, compare.StatusNotComparable, sig(50, 0.001), not, not),
			row("client_credentials", 8, compare.StatusOldOnly, compare.Delta{}, compare.Delta{}, compare.Delta{}),
		}},
		{File: "pair-2.window.tsv", Rows: []compare.Row{
			row("discovery", 8, compare.StatusCompared, not, not, not),
			row("introspect", 8, compare.StatusCompared, not, not, not),
			row("userinfo", 8, compare.StatusCompared, not, not, not),
			row("client_credentials", 32, compare.StatusCompared, sig(1e-05, 0.00001), not, not),
			row("client_credentials", 8, compare.StatusCompared, not, not, not),
			row("auth_code", 8, compare.StatusCompared, not, not, not),
		}},
	}
	want := `
samples: one per window
  flagged qps: pair-1.window.tsv discovery c=8 -6.25% (p=0.0079)
  flagged qps: pair-2.window.tsv client_credentials c=32 1e-05% (p=1e-05)
  compared cells: 8
  significant qps: 2 of 8 (25%)
  significant p50: 1 of 8 (12%)
  significant p99: 1 of 8 (12%)
`
	if got := Tally("window", pairs); got != want {
		t.Errorf("Tally:\n%s\nwant:\n%s", got, want)
	}
	// A line of results/false-alarms/rounds-19068bb/summary.txt, from its row.
	flagged := Tally("window", []PairRows{{File: "pair-2.window.tsv", Rows: []compare.Row{
		row("discovery", 8, compare.StatusCompared, sig(-10.367892976588621, 0.03174603174603175), not, not)}}})
	if want := "  flagged qps: pair-2.window.tsv discovery c=8 -10.367892976588621% (p=0.03174603174603175)\n"; !strings.Contains(flagged, want) {
		t.Errorf("Tally:\n%s\nwant a line\n%s", flagged, want)
	}
	// Nothing compared: 0 of 0, 0% (awk's "rows ? ... : 0").
	want = `
samples: one per interval
  compared cells: 0
  significant qps: 0 of 0 (0%)
  significant p50: 0 of 0 (0%)
  significant p99: 0 of 0 (0%)
`
	if got := Tally("interval", nil); got != want {
		t.Errorf("Tally of nothing:\n%s\nwant:\n%s", got, want)
	}
}

// fakeEnv runs the stand-in run tool of testdata/bin; it logs into log.
func fakeEnv(t *testing.T, log *strings.Builder, stdout *strings.Builder, vars map[string]string) Env {
	t.Helper()
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	vars["IDPBENCH_ROOT"], vars["IDPBENCH_BIN"] = t.TempDir(), bin
	environ := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return Env{Stdout: stdout, Stderr: log, Getenv: func(k string) string { return vars[k] },
		Environ: func() []string { return environ }, Log: cli.Logger{W: log, Tag: "false-alarms"}}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestFalseAlarmsResume: a run whose meta.json exists is not run again;
// the others are run with the script's arguments and environment, logging
// to runs/run-<i>.log. The stand-in runs write no steps, so the pair
// cannot be compared: summary.txt says so and the exit is 1.
func TestFalseAlarmsResume(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "runs", "run-1", "oidc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "runs", "run-1", "oidc", "meta.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"IDPBENCH_LADDER": "4"})
	err := FalseAlarms{Pairs: 1, Repeats: 3, Out: out}.Run(context.Background(), e)
	if cli.ExitCode(err) != cli.ExitRuntime || !errors.Is(err, ErrRunFailed) {
		t.Errorf("Run: %v (exit %d); want ErrRunFailed, exit 1", err, cli.ExitCode(err))
	}
	calls := readLines(t, filepath.Join(out, "runs", "calls"))
	want := []string{"--quick --only oidc --repeats 3 --run-id run-2 NO_BUILD=1 LADDER=4"}
	if !slices.Equal(calls, want) {
		t.Errorf("runs:\n%q\nwant\n%q", calls, want)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "run-1.log")); !os.IsNotExist(err) {
		t.Errorf("run-1.log of the kept run: %v; want none", err)
	}
	if got := readLines(t, filepath.Join(out, "runs", "run-2.log")); !slices.Equal(got, []string{"run run-2: a log line"}) {
		t.Errorf("run-2.log: %q", got)
	}
	for _, s := range []string{"[step 1/2] run 1: scenarios discovery client_credentials introspect userinfo, ladder 4, 3 windows each",
		"run 1: finished before (its meta.json exists), kept", "[step 2/2] run 2"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
	sum := readLines(t, filepath.Join(out, "summary.txt"))
	if sum[0] != "false alarms of aggregate compare: 1 pairs of back-to-back runs of one unchanged target" ||
		sum[1] != "target: examples/oidc/refop.env; scenarios: discovery client_credentials introspect userinfo; ladder: 4; windows per step: 3; quick profile" ||
		!slices.ContainsFunc(sum, func(l string) bool { return strings.HasPrefix(l, "pair 1: compare failed: ") }) {
		t.Errorf("summary.txt:\n%s", strings.Join(sum, "\n"))
	}
	for _, name := range pairFiles(1) {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s of a pair not compared: %v; want none", name, err)
		}
	}
	if stdout.String() != strings.Join(sum, "\n")+"\n" {
		t.Errorf("stdout is not summary.txt:\n%s", stdout.String())
	}
	// Rerun: both runs are finished now, neither runs again.
	_ = FalseAlarms{Pairs: 1, Repeats: 3, Out: out}.Run(context.Background(), e)
	if got := readLines(t, filepath.Join(out, "runs", "calls")); !slices.Equal(got, want) {
		t.Errorf("rerun ran again: %q", got)
	}
}

// TestFalseAlarmsRunFails: a failed run is logged with its log's path and
// ends in exit 1; the runs after it still run.
func TestFalseAlarmsRunFails(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUN_FAIL": "run-1"})
	err := FalseAlarms{Pairs: 1, Repeats: 5, Out: out}.Run(context.Background(), e)
	if cli.ExitCode(err) != cli.ExitRuntime {
		t.Errorf("Run: %v; want exit 1", err)
	}
	if want := "run 1 failed (log: " + filepath.Join(out, "runs", "run-1.log") + ")"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	if got := readLines(t, filepath.Join(out, "runs", "calls")); len(got) != 2 {
		t.Errorf("runs: %q; want both", got)
	}
}

// TestWarmupCheckArms: both arms run (the run tool resumes them), the
// fixed one with the fixed warmup's variables; an arm that fails ends the
// check with exit 1 naming its log.
func TestWarmupCheckArms(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUN_FAIL": "rule"})
	err := WarmupCheck{Product: "keycloak", Scenario: "discovery", FixedS: 30, Repeats: 4, Out: out}.Run(context.Background(), e)
	if cli.ExitCode(err) != cli.ExitRuntime || !strings.Contains(err.Error(), "arm rule failed (log: "+filepath.Join(out, "runs", "rule.log")+")") {
		t.Errorf("Run: %v; want arm rule failed, exit 1", err)
	}
	want := []string{"--only keycloak --repeats 4 --run-id fixed NO_BUILD=1 LADDER=2 8 32",
		"--only keycloak --repeats 4 --run-id rule NO_BUILD=1 LADDER=2 8 32"}
	if got := readLines(t, filepath.Join(out, "runs", "calls")); !slices.Equal(got, want) {
		t.Errorf("runs:\n%q\nwant\n%q", got, want)
	}
	if s := "arm fixed: keycloak discovery, ladder 2 8 32, 4 windows a level (IDPBENCH_WARMUP_S=1 IDPBENCH_WARMUP_MAX_S=30 IDPBENCH_WARMUP_TOLERANCE_PCT=0.01 IDPBENCH_WARMUP_JIT_MAX_PCT=0)"; !strings.Contains(log.String(), s) {
		t.Errorf("log lacks %q:\n%s", s, log.String())
	}
}

// fixtureRun copies internal/report's fixture product (hydra) into a new
// run directory as product, for the stand-in run tool to copy.
func fixtureRun(t *testing.T, product string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, product), os.DirFS("../model/testdata/run1/hydra")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWarmupCheckAnalysis: two arms that ran the same records compare
// without a difference; warmups.tsv has a row per step file of the
// scenario in each arm, sorted by arm then start; stdout is compare.md.
func TestWarmupCheckAnalysis(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUN_FROM": fixtureRun(t, "hydra")})
	if err := (WarmupCheck{Product: "hydra", Scenario: "discovery", FixedS: 60, Repeats: 4, Out: out}).Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != string(md) || !strings.Contains(string(md), "discovery") {
		t.Errorf("stdout is not compare.md, or it lacks the scenario:\n%s", stdout.String())
	}
	rows := readLines(t, filepath.Join(out, "warmups.tsv"))
	if rows[0]+"\n" != WarmupsHeader || len(rows) != 1+2*4 {
		t.Fatalf("warmups.tsv: want the header and 4 discovery steps an arm:\n%s", strings.Join(rows, "\n"))
	}
	for i, r := range rows[1:] {
		f := strings.Split(r, "\t")
		if arm := []string{ArmFixed, ArmRule}[i/4]; f[0] != arm || (i%4 > 0 && f[1] < strings.Split(rows[i], "\t")[1]) {
			t.Errorf("row %d %q: want arm %s, sorted by start", i+1, r, arm)
		}
	}
}

// TestFalseAlarmsCompared: a pair of runs of the same records is compared
// in both units, written as pair-1.window.tsv, pair-1.interval.tsv and
// pair-1.md, and nothing in it is flagged.
func TestFalseAlarmsCompared(t *testing.T) {
	out := t.TempDir()
	var log, stdout strings.Builder
	e := fakeEnv(t, &log, &stdout, map[string]string{"FAKE_RUN_FROM": fixtureRun(t, "oidc")})
	if err := (FalseAlarms{Pairs: 1, Repeats: 5, Out: out}).Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	for _, name := range pairFiles(1) {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	sum := stdout.String()
	if strings.Contains(sum, "flagged") || !strings.Contains(sum, "samples: one per window\n  compared cells: ") ||
		strings.Contains(sum, "compared cells: 0\n") {
		t.Errorf("summary:\n%s", sum)
	}
}
