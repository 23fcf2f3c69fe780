package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestPhaseRunning: --running's file carries a phase from the call that
// begins it to the one that ends it: a session's first phase begins at
// --start, each next one ends the running one (its record appended, its
// time printed), a call without --kind only ends it, and with nothing
// running nothing is appended.
func TestPhaseRunning(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, schema.PhasesFile), filepath.Join(dir, "phase")
	t0 := time.Date(2026, 12, 3, 22, 0, 0, 0, time.UTC)
	call := func(at time.Duration, c phaseConfig) string {
		t.Helper()
		var stdout bytes.Buffer
		c.out, c.session, c.running = out, "s1", state
		if err := c.next(t0.Add(at), env{Stdout: &stdout}); err != nil {
			t.Fatalf("at +%s: %v", at, err)
		}
		return stdout.String()
	}
	if got := call(5*time.Second, phaseConfig{kind: "build", name: "build tools", start: t0.Format(time.RFC3339)}); got != "" {
		t.Errorf("the first phase: printed %q, want nothing (none was running)", got)
	}
	if got := call(65400*time.Millisecond, phaseConfig{kind: "database", name: "PostgreSQL up"}); got != "build tools took 65 s\n" {
		t.Errorf("the second phase: printed %q, want the first one's time", got)
	}
	if got := call(70*time.Second, phaseConfig{}); got != "PostgreSQL up took 5 s\n" {
		t.Errorf("ending: printed %q", got)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("%s left after the running phase ended (%v)", state, err)
	}
	if got := call(80*time.Second, phaseConfig{}); got != "" {
		t.Errorf("ending with nothing running: printed %q", got)
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
	want := []struct {
		kind, name string
		seconds    float64
	}{{"build", "build tools", 65.4}, {"database", "PostgreSQL up", 4.6}}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if p := got[i]; p.Kind != w.kind || p.Name != w.name || p.Seconds != w.seconds || p.Session != "s1" {
			t.Errorf("record %d: %+v, want %s %q %.1f s", i, p, w.kind, w.name, w.seconds)
		}
	}
	if err := os.WriteFile(state, []byte("start\nepoch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	c := phaseConfig{out: out, session: "s1", running: state}
	if err := c.next(t0, env{Stdout: &stdout}); err == nil || !strings.Contains(err.Error(), state) {
		t.Errorf("a running file that is not one: %v, want an error naming it", err)
	}
}
