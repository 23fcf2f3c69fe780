package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"

	"github.com/idpbench/idpbench/internal/steps"
)

var phaseT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return phaseT0.Add(time.Duration(s * float64(time.Second))) }

func ph(session, product, kind string, from, to float64) schema.Phase {
	return schema.NewPhase(session, product, kind, product+" "+kind, sec(from), sec(to))
}

// win is a step of product with the phase label, measured from..to after a warmup.
func win(product, label string, warmup, from, to float64) StepFile {
	return StepFile{Path: product + "/x.json", Step: &schema.Step{Product: product, Scenario: "discovery",
		Labels: map[string]string{"phase": label}, WarmupS: warmup, Start: sec(from), End: sec(to)}}
}

// A resumed run: session s1 ran hydra's setup and discovery ladder and was
// interrupted; s2 ran its client_credentials ladder and GC-jitter run, then
// keycloak, which failed its cold start (no ladder at all).
func syntheticRun() ([]PhaseFile, []StepFile) {
	phases := []schema.Phase{
		ph("s1", "", schema.PhaseKindBuild, 0, 30),
		ph("s1", "", schema.PhaseKindDatabase, 30, 32),
		ph("s1", "hydra", schema.PhaseKindInstall, 32, 40),
		ph("s1", "hydra", schema.PhaseKindColdstart, 40, 60),
		ph("s1", "hydra", schema.PhaseKindSetup, 60, 70),
		ph("s1", "hydra", schema.PhaseKindLadder, 70, 130),
		ph("s1", "hydra", schema.PhaseKindTeardown, 130, 135), // the EXIT trap's cleanup
		ph("s2", "", schema.PhaseKindBuild, 1000, 1002),
		ph("s2", "", schema.PhaseKindDatabase, 1002, 1004),
		ph("s2", "hydra", schema.PhaseKindLadder, 1004, 1064),
		ph("s2", "hydra", schema.PhaseKindGCJitter, 1064, 1140),
		ph("s2", "keycloak", schema.PhaseKindInstall, 1140, 1150),
		ph("s2", "keycloak", schema.PhaseKindColdstart, 1150, 1200),
		ph("s2", "keycloak", schema.PhaseKindTeardown, 1200, 1210),
		ph("s2", "", schema.PhaseKindReport, 1210, 1212),
	}
	steps := []StepFile{
		win("hydra", steps.PhaseLadder, 5, 80, 90),
		win("hydra", steps.PhaseLadder, 5, 100, 110),
		win("hydra", steps.PhaseLadder, 5, 125, 135),      // straddles the end of its ladder: counted nowhere
		win("hydra", steps.PhaseLadder, 5, 300, 310),      // between the sessions: inside no phase
		win("keycloak", steps.PhaseLadder, 5, 90, 100),    // another product's step inside hydra's ladder
		win("hydra", steps.PhaseGCJitter, 5, 112, 118),    // a GC-jitter step inside a ladder phase: not a ladder step
		win("hydra", steps.PhaseLadder, 5, 1010, 1020),    // the second session's ladder
		win("hydra", steps.PhaseGCJitter, 5, 1070, 1130),  // the GC-jitter run's window
		win("keycloak", steps.PhaseLadder, 5, 1160, 1170), // inside keycloak's cold start, not a ladder phase
	}
	return [][]PhaseFile{{{Path: "run/phases.jsonl", Phases: phases[:7]}, {Path: "run/phases.jsonl", Phases: phases[7:]}}}[0], steps
}

func TestBuildTimeUse(t *testing.T) {
	files, steps := syntheticRun()
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
		ph("s1", "", schema.PhaseKindBuild, 0, 10),
		ph("s1", "refop", schema.PhaseKindOther, 30, 40),
	}}}
	got := buildTimeUse(files, nil)
	last := got.Rows[len(got.Rows)-2:]
	if got.WallS != 40 || last[0].What != RowOther || last[0].TotalS() != 10 || last[1].What != RowUnrecorded || last[1].TotalS() != 20 {
		t.Errorf("wall %g s, last rows %+v; want 40 s, other 10 s, unrecorded 20 s", got.WallS, last)
	}
}

func TestRenderTimeUse(t *testing.T) {
	files, steps := syntheticRun()
	var b strings.Builder
	r := &Report{Time: buildTimeUse(files, steps)}
	if err := WriteMarkdown(&b, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| Where | hydra s | keycloak s | Total s | Total min | % of wall time |",
		"| measured windows | 30 | – | 30 | 0.5 | 8.6% |",
		"| build | – | – | 32 | 0.5 | 9.2% |",
		"| **total** | 239 | 70 | 347 | 5.8 | 100.0% |",
		"Measured windows: 8.6% of the wall time (0.5 min of 5.8 min).",
		"Measured windows incl. the GC-jitter runs' windows: 25.9% (1.5 min).",
		"from [phases.jsonl](run/phases.jsonl): run-comparison.sh",
		"2 sessions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the section lacks %q:\n%s", want, out)
		}
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
