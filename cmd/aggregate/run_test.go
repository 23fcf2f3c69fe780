package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

const run1 = "../../internal/model/testdata/run1"

type result struct {
	code           int
	stdout, stderr string
}

func runAgg(ctx context.Context, stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func TestHelpAndUsage(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantStdout []string
		wantStderr string
	}{
		{[]string{"--help"}, 0, []string{"report", "merge", "summary", "aggregate merge agent-*.json | aggregate summary -"}, ""},
		{[]string{"report", "--help"}, 0, []string{"--output FILE", "--title", "--charts-dir DIR", "Example:", "aggregate report results/latest -o"}, ""},
		{[]string{"merge", "-h"}, 0, []string{"--output FILE", "one interval", "aggregate merge agent-*.json | aggregate summary -"}, ""},
		{[]string{"summary", "--help"}, 0, []string{"--format FORMAT", "milliseconds", "Example:"}, ""},
		{[]string{"--version"}, 0, []string{"aggregate "}, ""},
		{nil, 2, nil, "subcommand is required"},
		{[]string{"frobnicate"}, 2, nil, `unknown subcommand "frobnicate"`},
		{[]string{"report", "--bogus"}, 2, nil, "unknown flag: --bogus"},
		{[]string{"summary", "--format", "xml"}, 2, nil, `--format "xml"`},
		{[]string{"merge", "-", "-"}, 2, nil, "only once"},
		{[]string{"report", "-o", ""}, 2, nil, "must not be empty"},
		{[]string{"efficiency", "--help"}, 0, []string{"--step FILE", "--samples FILE", "req_per_cpu_s", "Example:"}, ""},
		{[]string{"efficiency", "--step", "x.json"}, 2, nil, "--step and --samples are both required"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runAgg(context.Background(), "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tc.wantStderr) || (tc.wantStderr != "" && !strings.HasPrefix(r.stderr, "aggregate: ")) {
				t.Errorf("stderr %q, want %q after \"aggregate: \"", r.stderr, tc.wantStderr)
			}
		})
	}
}

func TestReportToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "COMPARISON.md")
	r := runAgg(context.Background(), "", "report", run1, "-o", out, "--title", "Test run")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Test run", "| S1 discovery | hydra | 12,400 (1 window, no 95% interval: needs 6) |", "| S6 userinfo | keycloak | 4,700 (1 window, no 95% interval: needs 6) |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if r.stdout != "" || strings.Count(r.stderr, "warning") != 1 || !strings.Contains(r.stderr, "notes.json") {
		t.Errorf("stdout %q stderr %q; want nothing on stdout and one warning naming notes.json", r.stdout, r.stderr)
	}
	charts, err := filepath.Glob(filepath.Join(filepath.Dir(out), "charts", "*.svg"))
	if err != nil || len(charts) != 19 { // 7 scenarios' qps and p99, 4 efficiency charts, GC jitter
		t.Errorf("charts next to the report: %q (%v), want 19", charts, err)
	}
	for _, c := range charts {
		if link := "](charts/" + filepath.Base(c) + ")"; !strings.Contains(string(b), link) {
			t.Errorf("report does not embed %s", link)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "charts", ".*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %q", tmp)
	}
}

func TestReportChartsWithStdout(t *testing.T) {
	r := runAgg(context.Background(), "", "report", run1)
	if r.code != 0 || !strings.Contains(r.stderr, "aggregate: charts not written") || !strings.Contains(r.stdout, "Charts were not written") ||
		strings.Contains(r.stdout, ".svg)") {
		t.Errorf("-o -: exit %d, stderr %q; want a note on stderr, no chart links", r.code, r.stderr)
	}
	dir := filepath.Join(t.TempDir(), "figs")
	r = runAgg(context.Background(), "", "report", run1, "--charts-dir", dir)
	if r.code != 0 || strings.Contains(r.stderr, "charts not written") {
		t.Fatalf("--charts-dir: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "gcjitter-p99.svg")); err != nil {
		t.Errorf("--charts-dir wrote no GC-jitter chart: %v", err)
	}
	if !strings.Contains(r.stdout, "figs/gcjitter-p99.svg)") {
		t.Errorf("report does not link the charts in %s", dir)
	}
}

func TestReportRejectsV2WithoutWriting(t *testing.T) {
	out := filepath.Join(t.TempDir(), "COMPARISON.md")
	r := runAgg(context.Background(), "", "report", run1, "../../internal/model/testdata/v2", "-o", out)
	if r.code != 1 || !strings.Contains(r.stderr, "discovery-c2.json") || !strings.Contains(r.stderr, "idpbench.step/v2") {
		t.Errorf("exit %d stderr %q; want 1 naming the v2 file", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists after a failed report: %v", err)
	}
}

func TestReportInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := runAgg(ctx, "", "report", run1); r.code != 130 {
		t.Errorf("exit %d, want 130", r.code)
	}
}

// agentFiles writes two agents' copies of one fixture step, same window.
func agentFiles(t *testing.T, shift time.Duration) (string, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run1, "hydra", "discovery-c2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s schema.Step
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "agent-0.json")
	if err := os.WriteFile(a, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Start, s.End = s.Start.Add(shift), s.End.Add(shift)
	b2, _ := json.Marshal(s)
	bf := filepath.Join(dir, "agent-1.json")
	if err := os.WriteFile(bf, b2, 0o644); err != nil {
		t.Fatal(err)
	}
	return a, bf
}

func TestMergeThenSummary(t *testing.T) {
	a, b := agentFiles(t, 300*time.Millisecond)
	m := runAgg(context.Background(), "", "merge", a, b)
	if m.code != 0 {
		t.Fatalf("merge exit %d: %s", m.code, m.stderr)
	}
	for _, format := range []struct{ name, want string }{
		{"text", "hydra discovery 4 8,200 0.450"},
		{"csv", "hydra,discovery,4,8200,"},
		{"json", `"c":4,"qps":8200,`},
	} {
		s := runAgg(context.Background(), m.stdout, "summary", "--format", format.name, "-")
		if s.code != 0 || !strings.Contains(strings.Join(strings.Fields(s.stdout), " "), format.want) {
			t.Errorf("summary --format %s: exit %d, output %q, want %q", format.name, s.code, s.stdout, format.want)
		}
	}
}

func TestMergeToFileAndErrors(t *testing.T) {
	a, b := agentFiles(t, 0)
	out := filepath.Join(t.TempDir(), "merged.json")
	if r := runAgg(context.Background(), "", "merge", "-o", out, a, b); r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := schema.DecodeStep(f, out)
	if err != nil || s.Agents != 2 || s.Connections != 4 {
		t.Errorf("merged step %+v err %v; want 2 agents, c=4", s, err)
	}
	_, late2 := agentFiles(t, 5*time.Second)
	if r := runAgg(context.Background(), "", "merge", a, late2); r.code != 1 || !strings.Contains(r.stderr, late2) {
		t.Errorf("non-overlapping merge: exit %d stderr %q; want 1 naming %s", r.code, r.stderr, late2)
	}
}

func TestSteadyJSONLines(t *testing.T) {
	r := runAgg(context.Background(), "", "steady", run1)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	byCell := map[string]model.CellRow{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row model.CellRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		byCell[row.Product+"/"+row.ID] = row
	}
	if got := byCell["hydra/S1"]; !got.Steady || got.Connections != 8 || got.QPS != 12400 || got.Failed != 0 {
		t.Errorf("hydra/S1 = %+v, want steady at c=8 with 12400 qps and no failures", got)
	}
	if got := byCell["keycloak/S1"]; got.Steady || !strings.Contains(got.Reason, "driver-limited") {
		t.Errorf("keycloak/S1 = %+v, want N/A because driver-limited", got)
	}
	if got := byCell["keycloak/S2"]; got.Steady || got.Reason != model.NoResults {
		t.Errorf("keycloak/S2 = %+v, want N/A %q", got, model.NoResults)
	}
	if got := byCell["keycloak/S4"]; !got.Steady || got.Unit != "iteration" || got.ByName["oidc_token"].Requests != got.Requests {
		t.Errorf("keycloak/S4 = %+v, want steady iterations with oidc_token per iteration", got)
	}
}

// TestEfficiencyOfOneStep: hydra's discovery c=8 of run1 (172% of a core
// for the IdP, 3% for PostgreSQL in the fixture, give or take its wobble)
// gives the report's figure for that cell.
func TestEfficiencyOfOneStep(t *testing.T) {
	r := runAgg(context.Background(), "", "efficiency", "--step", run1+"/hydra/discovery-c8.json", "--samples", run1+"/hydra/samples.jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var row model.EfficiencyRow
	if err := json.Unmarshal([]byte(r.stdout), &row); err != nil {
		t.Fatalf("output %q: %v", r.stdout, err)
	}
	if row.IdPSource != "process:hydra" || row.PerIdP == nil || row.PerStack == nil ||
		math.Round(*row.PerIdP) != 7209 || math.Round(*row.PerStack) != 7086 {
		t.Errorf("row %+v, want 7,209 / 7,086 req/CPU-s of process:hydra (COMPARISON.golden.md)", r.stdout)
	}
	if r := runAgg(context.Background(), "", "efficiency", "--step", run1+"/hydra/discovery-c8.json", "--samples", run1+"/hydra/meta.json"); r.code != 1 ||
		!strings.Contains(r.stderr, "no sampler records") {
		t.Errorf("samples without records: exit %d, stderr %q; want 1 naming it", r.code, r.stderr)
	}
}

// TestRefusesDirWithoutRecords: report, summary, steady and compare refuse a
// directory that holds no idpbench record (a wrong path, an empty run),
// exit 2 naming it, with nothing on stdout and no output file, as compare
// always did: a report of empty tables is no report.
func TestRefusesDirWithoutRecords(t *testing.T) {
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "COMPARISON.md")
	for _, args := range [][]string{
		{"report", empty, "-o", out},
		{"summary", empty},
		{"steady", empty},
		{"compare", run1, empty},
	} {
		r := runAgg(context.Background(), "", args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, empty+": nothing to read: no idpbench record under it") {
			t.Errorf("aggregate %s: exit %d, stdout %q, stderr %q; want 2 naming the directory", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("report wrote %s (%v)", out, err)
	}
}

// TestOutputFlag: the subcommands that print data take -o FILE and write
// there what they print on stdout without it.
func TestOutputFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"summary", "--format", "csv", run1},
		{"steady", run1},
		{"compare", "--all-steps", run1, run1},
	} {
		want := runAgg(context.Background(), "", args...)
		file := filepath.Join(dir, args[0]+".out")
		got := runAgg(context.Background(), "", append([]string{args[0], "-o", file}, args[1:]...)...)
		b, err := os.ReadFile(file)
		if want.code != 0 || got.code != 0 || got.stdout != "" || err != nil || string(b) != want.stdout || want.stdout == "" {
			t.Errorf("aggregate %s -o: exit %d (without: %d), stdout %q, file %q (%v); want the file to hold what stdout did",
				strings.Join(args, " "), got.code, want.code, got.stdout, b, err)
		}
	}
}
