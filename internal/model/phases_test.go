package model

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
)

// phaseRun is recordtest.PhaseRun as the model's inputs: a phases file a session.
func phaseRun() ([]PhaseFile, []StepFile) {
	sessions, records := recordtest.PhaseRun()
	var files []PhaseFile
	for _, ps := range sessions {
		files = append(files, PhaseFile{Path: "run/phases.jsonl", Phases: ps})
	}
	return files, records
}

func TestBuildTimeUse(t *testing.T) {
	files, steps := phaseRun()
	got := buildTimeUse(files, steps)
	if got == nil {
		t.Fatal("no time table")
	}
	if got.Sessions != 2 || got.WallS != 135+212 {
		t.Errorf("sessions %d, wall %g s; want 2 and 347 s", got.Sessions, got.WallS)
	}
	if strings.Join(got.Products, ",") != "hydra,keycloak" {
		t.Errorf("products %v, want hydra, keycloak (the run's order)", got.Products)
	}
	if got.MeasuredS != 30 || got.JitterMeasuredS != 60 {
		t.Errorf("measured %g s, GC jitter measured %g s; want 30 and 60", got.MeasuredS, got.JitterMeasuredS)
	}
	want := map[string]map[string]float64{
		RowInstall:   {"hydra": 8, "keycloak": 10},
		RowColdstart: {"hydra": 20, "keycloak": 50},
		RowSetup:     {"hydra": 10},
		RowOverhead:  {"hydra": 30 + 45},
		RowWarmups:   {"hydra": 10 + 5},
		RowMeasured:  {"hydra": 20 + 10},
		RowGCJitter:  {"hydra": 76},
		RowTeardown:  {"hydra": 5, "keycloak": 10},
		RowBuild:     {"": 32},
		RowDatabase:  {"": 4},
		RowReport:    {"": 2},
	}
	var names []string
	total := 0.0
	for _, row := range got.Rows {
		names = append(names, row.What)
		total += row.TotalS()
		for p, s := range want[row.What] {
			if row.S[p] != s {
				t.Errorf("%s, %q: %g s, want %g", row.What, p, row.S[p], s)
			}
		}
		if len(row.S) != len(want[row.What]) {
			t.Errorf("%s: columns %v, want %v", row.What, row.S, want[row.What])
		}
	}
	if strings.Join(names, "|") != strings.Join(timeRows, "|") {
		t.Errorf("rows %v, want %v", names, timeRows)
	}
	if total != got.WallS {
		t.Errorf("rows add up to %g s, the wall time is %g s", total, got.WallS)
	}
}

func TestBuildTimeUseGapsAndNone(t *testing.T) {
	if got := buildTimeUse(nil, nil); got != nil {
		t.Errorf("no phase records: %+v, want no table", got)
	}
	// A failed append lost 20 s of the session, and one phase is of kind other.
	files := []PhaseFile{{Path: "phases.jsonl", Phases: []schema.Phase{
		recordtest.Ph("s1", "", schema.PhaseKindBuild, 0, 10),
		recordtest.Ph("s1", "refop", schema.PhaseKindOther, 30, 40),
	}}}
	got := buildTimeUse(files, nil)
	last := got.Rows[len(got.Rows)-2:]
	if got.WallS != 40 || last[0].What != RowOther || last[0].TotalS() != 10 || last[1].What != RowUnrecorded || last[1].TotalS() != 20 {
		t.Errorf("wall %g s, last rows %+v; want 40 s, other 10 s, unrecorded 20 s", got.WallS, last)
	}
}

// A malformed phases.jsonl is an error naming the file and the line.
func TestLoadMalformedPhases(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, schema.PhasesFile)
	good := `{"schema":"idpbench.phase/v1","session":"s1","product":"","kind":"build","name":"build tools",` +
		`"start":"2026-11-30T09:00:00Z","end":"2026-11-30T09:00:30Z","seconds":30}`
	if err := os.WriteFile(path, []byte(good+"\n"+strings.Replace(good, `"build"`, `"lunch"`, 1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), []string{dir}, nil, func(string) {})
	if err == nil || !strings.Contains(err.Error(), path+": line 2: not a valid phase record: kind \"lunch\"") {
		t.Fatalf("error %v, want one naming %s, line 2", err, path)
	}
	if err := os.WriteFile(path, []byte(good+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Load(context.Background(), []string{dir}, nil, func(string) {})
	if err != nil || len(in.Phases) != 1 || len(in.Phases[0].Phases) != 1 {
		t.Fatalf("loaded %+v, %v; want one file of one phase", in, err)
	}
}
