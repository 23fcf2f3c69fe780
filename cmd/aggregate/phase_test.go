package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestPhaseAppends writes two records into one file (the second a
// run-wide phase of another session) and reads them back with the
// report's decoder.
func TestPhaseAppends(t *testing.T) {
	out := filepath.Join(t.TempDir(), schema.PhasesFile)
	calls := [][]string{
		{"--kind", "ladder", "--product", "hydra", "--name", "hydra ladder discovery", "--session", "s1",
			"--start", "2026-11-30T10:00:00Z", "--end", "2026-11-30T10:01:30.25Z"},
		{"--kind", "report", "--name", "aggregate report", "--session", "s2",
			"--start", "2026-11-30T12:00:00+01:00", "--end", "2026-11-30T11:00:02Z"},
	}
	for _, args := range calls {
		if r := runAgg(context.Background(), "", append([]string{"phase", "--out", out}, args...)...); r.code != 0 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := schema.DecodePhases(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	if p := got[0]; p.Product != "hydra" || p.Kind != "ladder" || p.Session != "s1" || p.Seconds != 90.25 {
		t.Errorf("first record %+v", p)
	}
	if p := got[1]; p.Product != "" || p.Seconds != 2 || p.Start.Location().String() != "UTC" {
		t.Errorf("second record %+v (want 2 s, times in UTC)", p)
	}
}

func TestPhaseRejects(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, schema.PhasesFile)
	ok := map[string]string{"--out": out, "--kind": "setup", "--name": "hydra setup", "--product": "hydra",
		"--session": "s1", "--start": "2026-11-30T10:00:00Z", "--end": "2026-11-30T10:00:05Z"}
	args := func(change map[string]string) []string {
		a := []string{"phase"}
		for _, k := range []string{"--out", "--kind", "--name", "--product", "--session", "--start", "--end"} {
			v, found := change[k]
			if !found {
				v = ok[k]
			}
			a = append(a, k, v)
		}
		return a
	}
	tests := []struct {
		name   string
		change map[string]string
		code   int
		stderr string
	}{
		{"bad start", map[string]string{"--start": "10:00"}, 2, `--start "10:00": want an RFC 3339 time`},
		{"bad end", map[string]string{"--end": "2026-11-30 10:00:05"}, 2, `--end "2026-11-30 10:00:05"`},
		{"end before start", map[string]string{"--end": "2026-11-30T09:00:00Z"}, 2, "--start, --end: not a valid phase record: end 2026-11-30T09:00:00Z before start"},
		{"unknown kind", map[string]string{"--kind": "lunch"}, 2, `--kind "lunch": want one of build, database`},
		{"no session", map[string]string{"--session": ""}, 2, "--session is required"},
		{"no name", map[string]string{"--name": " "}, 2, "--name is required"},
		{"no out", map[string]string{"--out": ""}, 2, "--out is required"},
		{"unwritable file", map[string]string{"--out": filepath.Join(dir, "missing", "phases.jsonl")}, 1,
			"appending to " + filepath.Join(dir, "missing", "phases.jsonl") + ": open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAgg(context.Background(), "", args(tt.change)...)
			if r.code != tt.code || !strings.HasPrefix(r.stderr, "aggregate: phase: ") && tt.code == 2 ||
				!strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a rejected record created %s (stat: %v)", out, err)
	}
	if r := runAgg(context.Background(), "", "phase", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--session ID") {
		t.Errorf("--help: exit %d, stdout %q", r.code, r.stdout)
	}
}
