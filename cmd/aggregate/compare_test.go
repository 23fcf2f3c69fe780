package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// writeWindows writes n repeated windows of one discovery step at qps into
// dir/hydra (files discovery-c8.json, discovery-c8-r2.json ...).
func writeWindows(t *testing.T, dir string, qps float64, n int) string {
	t.Helper()
	pdir := filepath.Join(dir, "hydra")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		q := qps * (1 + 0.01*float64(i%3-1))
		st := start.Add(time.Duration(i) * 5 * time.Second)
		reqs := int64(q * 3)
		s := schema.Step{Schema: schema.StepV1, Product: "hydra", ProductVersion: "v2.3.0", Scenario: schema.ScenarioDiscovery,
			Connections: 8, Check: schema.CheckIssuer, Status: schema.StatusComplete, DurationS: 3,
			Start: st, End: st.Add(3 * time.Second), Requests: reqs, OK: reqs, QPS: q,
			LatencyModel: schema.ModelClosedLoop, LatencyMS: schema.Latency{P50: 8000 / q, P99: 24000 / q},
			Labels: map[string]string{"phase": "ladder", "repeat": fmt.Sprint(i + 1)}}
		name := "discovery-c8.json"
		if i > 0 {
			name = fmt.Sprintf("discovery-c8-r%d.json", i+1)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompareExitCodes(t *testing.T) {
	tmp := t.TempDir()
	base := writeWindows(t, filepath.Join(tmp, "base"), 1000, 5)
	same := writeWindows(t, filepath.Join(tmp, "same"), 1000, 5)
	slower := writeWindows(t, filepath.Join(tmp, "slower"), 800, 5)
	few := writeWindows(t, filepath.Join(tmp, "few"), 800, 2)
	gate := "--fail-on=qps<-5%,p99>+10%"
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"same", []string{"compare", gate, base, same}, 0, "~ (p=1.000)", ""},
		{"no gate", []string{"compare", base, slower}, 0, "**-20%**", ""},
		{"slower", []string{"compare", gate, base, slower}, 1, "Gate `qps<-5%,p99>+10%`: 2 regression(s)", "FAIL hydra discovery c=8: qps -20%"},
		{"too few", []string{"compare", gate, base, few}, 3, "undecided", "UNDECIDED hydra discovery c=8"},
		{"faster is no regression", []string{"compare", gate, slower, base}, 0, "**+25%**", ""},
		{"json", []string{"compare", "--format", "json", base, slower}, 0, `"qps":{"delta_pct":-19.99`, ""},
		{"bad token", []string{"compare", "--fail-on", "qps<-5%,p95>+1%", base, same}, 2, "", `token "p95>+1%": unknown metric "p95"`},
		{"one input", []string{"compare", base}, 2, "", "want two inputs"},
		{"two stdins", []string{"compare", "-", "-"}, 2, "", "not both"},
		{"bad alpha", []string{"compare", "--alpha", "1.5", base, same}, 2, "", "--alpha 1.5"},
		{"bad format", []string{"compare", "--format", "xml", base, same}, 2, "", `--format "xml"`},
		{"missing dir", []string{"compare", base, filepath.Join(tmp, "nope")}, 2, "", "NEW: reading " + filepath.Join(tmp, "nope")},
		{"help", []string{"compare", "--help"}, 0, "3 undecided", ""},
		{"bad unit", []string{"compare", "--unit", "second", base, same}, 2, "", `--unit "second"`},
		{"agree", []string{"compare", "--agree", "5%", base, slower}, 0, "**0 of 1 cells agree within ±5%**", ""},
		{"agree same", []string{"compare", "--agree=25", base, slower}, 0, "**1 of 1 cells agree within ±25%**", ""},
		{"bad agree", []string{"compare", "--agree", "-5%", base, same}, 2, "", `--agree "-5%"`},
		{"agree needs steady mode", []string{"compare", "--agree", "5%", "--all-steps", base, same}, 2, "", "not with --all-steps"},
		{"interval unit cannot gate", []string{"compare", "--unit", "interval", gate, base, same}, 2, "", "cannot gate"},
		{"footprint is Markdown only", []string{"compare", "--footprint", "--format", "json", base, same}, 2, "", "--footprint is in the Markdown format only"},
		{"footprint", []string{"compare", "--footprint", base, same}, 0, "### Cold start and memory", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runAgg(context.Background(), "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, r.stdout)
			}
			if !strings.Contains(r.stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, r.stderr)
			}
		})
	}
}

func TestCompareBadInputs(t *testing.T) {
	tmp := t.TempDir()
	base := writeWindows(t, filepath.Join(tmp, "base"), 1000, 5)
	broken := filepath.Join(tmp, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"schema":"idpbench.step/v1","scenario":"discovery",`), 0o644); err != nil {
		t.Fatal(err)
	}
	invalid := filepath.Join(tmp, "invalid.json")
	if err := os.WriteFile(invalid, []byte(`{"schema":"idpbench.step/v1","scenario":"discovery","status":"complete","connections":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := filepath.Join(tmp, "v2.json")
	if err := os.WriteFile(v2, []byte(`{"schema":"idpbench.step/v2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name, path, want string
	}{
		{"truncated", broken, "NEW: reading " + broken},
		{"invalid", invalid, invalid + ": not a valid step record: connections 0"},
		{"other major version", v2, v2},
		{"no records", empty, "no idpbench record under it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runAgg(context.Background(), "", "compare", base, tc.path)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q: want 2, an error naming %q, nothing written", r.code, r.stderr, r.stdout, tc.want)
			}
		})
	}
	// A merged stream on stdin is one side.
	b, err := os.ReadFile(filepath.Join(base, "hydra", "discovery-c8.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := runAgg(context.Background(), string(b), "compare", "-", filepath.Join(base, "hydra", "discovery-c8.json"))
	if r.code != 0 || !strings.Contains(r.stdout, "1+1") {
		t.Errorf("stdin side: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
