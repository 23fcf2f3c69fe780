package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

func loadRun1(t *testing.T) (*Inputs, []string) {
	t.Helper()
	var warnings []string
	in, err := Load(context.Background(), []string{"testdata/run1"}, nil, func(m string) { warnings = append(warnings, m) })
	if err != nil {
		t.Fatal(err)
	}
	return in, warnings
}

func TestLoadRun1(t *testing.T) {
	in, warnings := loadRun1(t)
	if len(in.Steps) != 28 || len(in.Metas) != 3 || len(in.Coldstarts) != 4 || len(in.Samples) != 2 {
		t.Errorf("loaded %d steps, %d metas, %d coldstarts, %d sample files; want 28, 3, 4, 2",
			len(in.Steps), len(in.Metas), len(in.Coldstarts), len(in.Samples))
	}
	if len(in.Samples) == 2 && len(in.Samples[0].Samples) != len(recordtest.HydraSamples()) {
		t.Errorf("sample records %d, want %d", len(in.Samples[0].Samples), len(recordtest.HydraSamples()))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "notes.json") {
		t.Errorf("warnings %q, want one naming notes.json", warnings)
	}
}

func TestLoadRejectsOtherMajorVersion(t *testing.T) {
	for _, paths := range [][]string{{"testdata/v2"}, {"testdata/run1", "testdata/v2/hydra/discovery-c2.json"}} {
		_, err := Load(context.Background(), paths, nil, func(string) {})
		if err == nil {
			t.Fatalf("Load(%v) accepted idpbench.step/v2", paths)
		}
		for _, want := range []string{filepath.Join("v2", "hydra", "discovery-c2.json"), "idpbench.step/v2"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
	}
}

func TestLoadStdinStream(t *testing.T) {
	step := `{"schema":"idpbench.step/v1","product":"p","scenario":"discovery","connections":2,"status":"complete","qps":10,
		"start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:00:10Z"}`
	meta := `{"schema":"idpbench.meta/v1","product":"p","status":"ok"}`
	foreign := `{"schema":"k6.summary/v1"}`
	var warnings []string
	in, err := Load(context.Background(), []string{"-"}, strings.NewReader(step+"\n"+meta+"\n"+foreign+"\n"+step),
		func(m string) { warnings = append(warnings, m) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Steps) != 2 || len(in.Metas) != 1 || len(warnings) != 1 {
		t.Errorf("steps %d metas %d warnings %q; want 2, 1, one warning", len(in.Steps), len(in.Metas), warnings)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want string
	}{
		{"broken.json", `{"schema":"idpbench.step/v1",`, "broken.json"},
		{"meta.json", `{"schema":"idpbench.meta/v3","product":"x"}`, "idpbench.meta/v3"},
		{"s.jsonl", `{"schema":"idpbench.sample/v1","source":"postgres"}` + "\n" + `{"schema":"idpbench.sample/v2"}`, "record 2"},
		// A bare schema string is no step: it would become a 0-QPS row.
		{"bare.json", `{"schema":"idpbench.step/v1"}`, "no scenario; status \"\" is not complete, interrupted, target_lost or error; connections 0"},
		{"counts.json", `{"schema":"idpbench.step/v1","scenario":"discovery","connections":1,"status":"complete",` +
			`"start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:00:10Z","requests":10,"ok":8}`, "requests 10 != ok 8 + failed 0"},
		// An idpbench record of a kind this build does not read is refused, not skipped.
		{"future.json", `{"schema":"idpbench.plot/v1"}`, `unknown idpbench record kind "idpbench.plot/v1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), []string{p}, nil, func(string) {})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("error %v, want one naming %s and %q", err, tc.name, tc.want)
			}
		})
	}
}

func TestLoadWarnsOncePerFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.json":   "",
		"array.json":   `[1, 2]`,
		"foreign.json": `{"schema":"k6/v1"}`,
		"lines.jsonl":  `{"schema":"vegeta/v1"}` + "\n" + `{"schema":"vegeta/v1"}`,
		"facts.json":   `{"schema":"idpbench.facts/v1","facts":[]}`,
		"skip.txt":     "not read",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warnings []string
	in, err := Load(context.Background(), []string{dir}, nil, func(m string) { warnings = append(warnings, m) })
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 5 || len(in.Steps)+len(in.Metas)+len(in.Samples) != 0 {
		t.Errorf("warnings %q (want one for each of the 5 json/jsonl files), records %+v", warnings, in)
	}
}

// TestLoadRequiredDirWithoutRecords: LoadRequired refuses a named directory
// with no idpbench record under it (none, or only foreign JSON), naming it,
// as a named file without one; Load walks it and returns nothing.
func TestLoadRequiredDirWithoutRecords(t *testing.T) {
	empty, foreign := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "k6.json"), []byte(`{"schema":"k6/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{empty, foreign} {
		_, err := LoadRequired(context.Background(), []string{dir}, nil, func(string) {})
		var nr NoRecordsError
		if !errors.As(err, &nr) || nr.Path != dir || !strings.Contains(err.Error(), "no idpbench record under it") {
			t.Errorf("LoadRequired(%s): %v; want a NoRecordsError naming it", dir, err)
		}
		if in, err := Load(context.Background(), []string{dir}, nil, func(string) {}); err != nil || in.records() != 0 {
			t.Errorf("Load(%s): %v; want no error and no record", dir, err)
		}
	}
	if in, err := LoadRequired(context.Background(), []string{"testdata/run1"}, nil, func(string) {}); err != nil || len(in.Steps) == 0 {
		t.Errorf("LoadRequired(testdata/run1): %v; want its steps", err)
	}
}

// TestLoadNamedFileWithoutRecords: a file named as an input that holds no
// idpbench record is an error naming it and why (a walked one is skipped
// with a warning: TestLoadWarnsOncePerFile); a named file with records and
// a foreign one beside them loads, warning about the foreign one.
func TestLoadNamedFileWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	step := `{"schema":"idpbench.step/v1","product":"p","scenario":"discovery","connections":2,"status":"complete","qps":10,` +
		`"start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:00:10Z"}`
	for _, tc := range []struct{ name, content, want string }{
		{"foreign.json", `{"schema":"k6/v1"}`, `foreign.json: nothing to read: not an idpbench record (schema "k6/v1")`},
		{"empty.json", "", "empty.json: nothing to read: empty file"},
		{"facts.json", `{"schema":"idpbench.facts/v1","facts":[]}`, "facts.json: nothing to read: readback's facts are read from the product's meta"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), []string{p}, nil, func(string) {}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	mixed := filepath.Join(dir, "mixed.jsonl")
	if err := os.WriteFile(mixed, []byte(step+"\n"+`{"schema":"k6/v1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	in, err := Load(context.Background(), []string{mixed}, nil, func(m string) { warnings = append(warnings, m) })
	if err != nil || len(in.Steps) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "mixed.jsonl: record 2") {
		t.Errorf("mixed.jsonl: %v, %d steps, warnings %q; want its step and one warning naming record 2", err, len(in.Steps), warnings)
	}
}

func step(c int, qps, errRate float64, limited bool, status string) *schema.Step {
	return &schema.Step{Connections: c, QPS: qps, Requests: int64(10 * qps), ErrorRate: errRate, Status: status,
		Driver: schema.Driver{Limited: limited}, Check: schema.CheckSub}
}

// judged sets the rule s was judged by.
func judged(s *schema.Step, check string) *schema.Step {
	s.Check = check
	return s
}

// unreached gives s a refused connection attempt and a second of its window unreachable.
func unreached(s *schema.Step) *schema.Step {
	s.ConnectErrors.Refused, s.UnreachableS = 1, 1
	return s
}

func TestSelectSteady(t *testing.T) {
	const ok = schema.StatusComplete
	tests := []struct {
		name      string
		recs      []*schema.Step
		want      int
		wantWhy   string
		wantInWhy string
	}{
		{"highest qps wins", []*schema.Step{step(2, 100, 0, false, ok), step(4, 300, 0, false, ok), step(8, 250, 0, false, ok)}, 1, "", ""},
		{"tie keeps fewer connections", []*schema.Step{step(2, 300, 0, false, ok), step(4, 300, 0, false, ok)}, 0, "", ""},
		{"limited never chosen", []*schema.Step{step(2, 100, 0, false, ok), step(4, 900, 0, true, ok)}, 0, "", ""},
		{"errors at threshold excluded", []*schema.Step{step(2, 100, 0.00009, false, ok), step(4, 900, schema.SteadyMaxErrorRate, false, ok)}, 0, "", ""},
		{"interrupted excluded", []*schema.Step{step(2, 100, 0, false, ok), step(4, 900, 0, false, schema.StatusInterrupted)}, 0, "", ""},
		{"no steps", nil, -1, "no results", ""},
		{"all errors", []*schema.Step{step(2, 100, 0.05, false, ok), step(8, 900, 0.023, false, ok)}, -1,
			"no step below 0.01% errors (best: c=8, 2.3% errors)", ""},
		{"all limited", []*schema.Step{step(2, 100, 0, true, ok), step(4, 200, 0, true, ok)}, -1, "", "all steps driver-limited (lower bound: c=4"},
		{"clean steps limited, others erroring", []*schema.Step{step(2, 100, 0, true, ok), step(4, 200, 0.5, false, ok)}, -1, "",
			"every step below 0.01% errors is driver-limited"},
		{"nothing complete", []*schema.Step{step(2, 100, 0, false, schema.StatusError), step(4, 200, 0, false, schema.StatusInterrupted)}, -1,
			"no complete step (1 error, 1 interrupted)", ""},
		{"another rule never chosen", []*schema.Step{step(2, 100, 0, false, ok), judged(step(4, 900, 0, false, ok), "2xx")}, 0, "", ""},
		{"every step judged by another rule", []*schema.Step{judged(step(2, 100, 0, false, ok), "2xx")}, -1,
			`judged by "2xx", not the scenario's rule "2xx json sub": not comparable`, ""},
		{"no recorded rule", []*schema.Step{judged(step(2, 100, 0, false, ok), "")}, -1, "", "record no success rule"},
		{"a step with failed connects never chosen", []*schema.Step{step(2, 100, 0, false, ok), unreached(step(4, 900, 0, false, ok))}, 0, "", ""},
		{"every clean step had failed connects", []*schema.Step{unreached(step(2, 100, 0, false, ok)), step(4, 200, 0.5, false, ok)}, -1,
			"every step below 0.01% errors had failed connection attempts (the target was unreachable for part of the window)", ""},
		{"target lost excluded", []*schema.Step{step(2, 100, 0, false, ok), step(4, 900, 0, false, schema.StatusTargetLost)}, 0, "", ""},
		{"a window without requests never chosen", []*schema.Step{step(2, 40, 0, false, ok), step(32, 0, 0, false, ok)}, 0, "", ""},
		{"no window had requests", []*schema.Step{step(2, 0, 0, false, ok), step(4, 0, 0, false, schema.StatusError)}, -1,
			"no request completed in any window (every request outlived its window)", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := steps.SelectSteady(tc.recs, schema.CheckSub)
			if got != tc.want {
				t.Errorf("index %d, want %d (why %q)", got, tc.want, why)
			}
			if tc.wantWhy != "" && why != tc.wantWhy {
				t.Errorf("why %q, want %q", why, tc.wantWhy)
			}
			if tc.wantInWhy != "" && !strings.Contains(why, tc.wantInWhy) {
				t.Errorf("why %q, want it to contain %q", why, tc.wantInWhy)
			}
			// One window per level: the level rule picks the same step, for the same reason.
			levels := make([][]*schema.Step, len(tc.recs))
			for i, s := range tc.recs {
				levels[i] = []*schema.Step{s}
			}
			if li, lwhy := steps.SelectSteadyLevel(levels, schema.CheckSub); li != got || lwhy != why {
				t.Errorf("SelectSteadyLevel of single windows: %d %q, SelectSteady: %d %q", li, lwhy, got, why)
			}
		})
	}
}

// windows are one level's steps at c, one per qps.
func windows(c int, qps ...float64) []*schema.Step {
	var out []*schema.Step
	for _, q := range qps {
		out = append(out, step(c, q, 0, false, schema.StatusComplete))
	}
	return out
}

// errWindows are windows with 1% errors: not a steady state.
func errWindows(c int, qps ...float64) []*schema.Step {
	ws := windows(c, qps...)
	for _, w := range ws {
		w.ErrorRate = 0.01
	}
	return ws
}

func TestSelectSteadyLevel(t *testing.T) {
	limited := windows(64, 3000, 3010, 3020, 3030, 3040)
	limited[2].Driver.Limited = true
	tests := []struct {
		name    string
		levels  [][]*schema.Step
		want    int
		wantWhy string
	}{
		{"c=8 within noise of the higher c=32", [][]*schema.Step{windows(2, 900, 910, 920, 930, 940),
			windows(8, 2000, 2100, 1950, 2050, 2020), windows(32, 2030, 1990, 2080, 2110, 2040)}, 1, ""},
		{"c=32 significantly higher", [][]*schema.Step{windows(2, 900, 910, 920, 930, 940),
			windows(8, 2000, 2010, 1990, 2005, 1995), windows(32, 2200, 2210, 2190, 2205, 2195)}, 2, ""},
		{"3 windows each: overlapping ranges are within noise", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(32, 2030, 1980, 2020)}, 0, ""},
		{"3 windows each: disjoint ranges are not", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(32, 2030, 2011, 2020)}, 1, ""},
		{"2 windows each: ranges that touch overlap", [][]*schema.Step{windows(8, 2000, 2010), windows(32, 2010, 2040)}, 0, ""},
		{"3 windows against 5: ranges", [][]*schema.Step{windows(8, 1950, 2010, 1990),
			windows(32, 2030, 2000, 2080, 2110, 2040)}, 0, ""},
		{"single windows: the best only", [][]*schema.Step{windows(8, 2000), windows(32, 2010)}, 1, ""},
		{"a single window is never within noise of 3", [][]*schema.Step{windows(8, 2000),
			windows(16, 2000, 2010, 1990), windows(32, 2005, 2015, 1995)}, 1, ""},
		{"levels of >= 3 windows are preferred to a higher single window", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(16, 2100), windows(32, 1700, 1710, 1690)}, 0, ""},
		{"a repeated level of errors does not make single windows give way", [][]*schema.Step{windows(8, 2000),
			windows(16, 2100), errWindows(32, 2200, 2210, 2190)}, 1, ""},
		{"a level with one bad window never qualifies", [][]*schema.Step{windows(8, 2000, 2010, 1990, 2005, 1995), limited}, 0, ""},
		{"the median decides, not the best window", [][]*schema.Step{windows(8, 2000, 2010, 1990),
			windows(32, 1500, 1500, 2500)}, 0, ""},
		{"none qualifies", [][]*schema.Step{{unreached(step(16, 2500, 0, false, schema.StatusComplete))}}, -1,
			"every step below 0.01% errors had failed connection attempts (the target was unreachable for part of the window)"},
		{"some windows qualify alone", [][]*schema.Step{limited}, -1, "no connection count all of whose windows are a steady state (c=64: 4 of 5)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := steps.SelectSteadyLevel(tc.levels, schema.CheckSub)
			if got != tc.want || why != tc.wantWhy {
				t.Errorf("SelectSteadyLevel = %d %q, want %d %q", got, why, tc.want, tc.wantWhy)
			}
		})
	}
}

func TestBuildCells(t *testing.T) {
	in, _ := loadRun1(t)
	r := Build(in, Options{})
	cells := map[string]Cell{}
	for _, c := range r.Cells {
		cells[c.Product+"/"+c.Scenario.Name] = c
	}
	tests := []struct {
		key        string
		steadyC    int // 0 = N/A
		reasonPart string
	}{
		{"hydra/discovery", 8, ""},
		{"hydra/client_credentials", 4, ""},
		{"hydra/refresh", 4, ""},
		{"keycloak/userinfo", 8, ""},
		{"keycloak/introspect", 0, "no step below 0.01% errors (best: c=2"},
		{"keycloak/discovery", 0, "all steps driver-limited"},
		{"hydra/auth_code", 0, "login/consent app"},
		{"keycloak/jwt_bearer", 0, "RFC 7523"},
		{"zitadel/discovery", 0, "no Docker engine"},
		{"hydra/userinfo", 0, NoResults},
		{"keycloak/auth_code", 4, ""},
		{"hydra/client_credentials_login", 4, ""},
		{"keycloak/client_credentials_login", 0, `judged by "2xx", not the scenario's rule`},
		{"hydra/introspect", 0, "record no success rule"},
		{"keycloak/refresh", 0, NoResults},
	}
	for _, tc := range tests {
		c, ok := cells[tc.key]
		if !ok {
			t.Errorf("no cell %s", tc.key)
			continue
		}
		s := c.SteadyStep()
		switch {
		case tc.steadyC > 0 && (s == nil || s.Step.Connections != tc.steadyC):
			t.Errorf("%s: steady %v, want c=%d (reason %q)", tc.key, s, tc.steadyC, c.NAReason)
		case tc.steadyC == 0 && (s != nil || !strings.Contains(c.NAReason, tc.reasonPart)):
			t.Errorf("%s: steady %v reason %q, want N/A containing %q", tc.key, s, c.NAReason, tc.reasonPart)
		}
	}
	// A ladder judged by another rule is no steady state, and its steps say why.
	if f := cells["keycloak/client_credentials_login"].Ladder[0].Flags; !slices.Contains(f, `judged by "2xx", not the scenario's rule`) {
		t.Errorf("keycloak S2l flags %q, want the other rule named", f)
	}
	if len(r.Cells) != len(r.Scenarios)*len(r.Products) {
		t.Errorf("%d cells for %d scenarios x %d products", len(r.Cells), len(r.Scenarios), len(r.Products))
	}
	phases := map[string]int{}
	for _, sf := range r.Other {
		phases[sf.Step.Labels["phase"]]++
	}
	if len(r.Other) != 4 || phases[steps.PhaseGCJitter] != 2 || phases[steps.PhaseShare] != 2 {
		t.Errorf("steps outside the ladder: %v, want the two gcjitter steps and hydra's two windows at shares", phases)
	}
	// The fixture's windows at shares are 3 s of one-second intervals: too
	// few for the sustain rule, so no latency is shown.
	if sh := cells["hydra/discovery"].Shares; len(sh) != 2 || sh[0].Share != 50 || sh[1].Share != 80 || !strings.HasPrefix(sh[0].NA, "not judged whether sustained: 3 intervals") || sh[0].P99.Center != 0 {
		t.Errorf("hydra discovery's shares: %+v, want 50%% and 80%%, not judged (3 intervals)", sh)
	}
}

func TestScenarioRows(t *testing.T) {
	meta := func(p string, na map[string]string) MetaFile {
		return MetaFile{Path: p + "/meta.json", Meta: &schema.Meta{Schema: schema.MetaV1, Product: p, Status: schema.MetaOK, ScenarioNA: na}}
	}
	sf := func(p, sc string) StepFile {
		return StepFile{Path: p + "/" + sc + "-c2.json", Step: &schema.Step{Product: p, Scenario: sc, Connections: 2,
			Status: schema.StatusComplete, Start: time.Unix(0, 0), Check: schema.ScenarioCheck(sc)}}
	}
	tests := []struct {
		name string
		in   Inputs
		want string
	}{
		{"core only", Inputs{Metas: []MetaFile{meta("a", nil)}}, "discovery client_credentials introspect refresh userinfo"},
		{"extra from steps and meta, custom last", Inputs{
			Metas: []MetaFile{meta("a", map[string]string{"jwt_bearer": "no"})},
			Steps: []StepFile{sf("b", "auth_code"), sf("b", "zzz"), sf("a", "request")}},
			"discovery client_credentials jwt_bearer introspect auth_code refresh userinfo request zzz"},
		{"gcjitter-only scenario gets no row", Inputs{Steps: []StepFile{{Path: "a/gcjitter.json", Step: &schema.Step{
			Product: "a", Scenario: "jwt_bearer", Labels: map[string]string{"phase": steps.PhaseGCJitter}}}}},
			"discovery client_credentials introspect refresh userinfo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Build(&tc.in, Options{})
			var names []string
			for _, s := range r.Scenarios {
				names = append(names, s.Name)
			}
			if got := strings.Join(names, " "); got != tc.want {
				t.Errorf("scenarios %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProductsSortedAndNamedByDirectory(t *testing.T) {
	in := &Inputs{
		Metas: []MetaFile{{Path: "r/zeta/meta.json", Meta: &schema.Meta{Schema: schema.MetaV1}}},
		Steps: []StepFile{{Path: "r/alpha/discovery-c2.json", Step: &schema.Step{Scenario: "discovery", ProductVersion: "1.0"}}},
	}
	r := Build(in, Options{})
	if len(r.Products) != 2 || r.Products[0].Name != "alpha" || r.Products[1].Name != "zeta" || r.Products[0].Version != "1.0" {
		t.Errorf("products %+v, want alpha (1.0), zeta", r.Products)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{steps.FormatQPS(0), "0"}, {steps.FormatQPS(8.123), "8.12"}, {steps.FormatQPS(81.26), "81.3"}, {steps.FormatQPS(812.4), "812"},
		{steps.FormatQPS(999.7), "1,000"}, {steps.FormatQPS(12345.6), "12,346"}, {steps.FormatQPS(1234567), "1,234,567"},
		{steps.FormatMS(0.4499), "0.450"}, {steps.FormatMS(12.34), "12.3"}, {steps.FormatMS(1500), "1,500"},
		{steps.FormatPct(0), "0%"}, {steps.FormatPct(0.0001), "0.01%"}, {steps.FormatPct(0.023), "2.3%"}, {steps.FormatPct(0.05), "5%"},
		{steps.FormatPct(1), "100%"}, {steps.FormatPct(0.0000123), "0.0012%"},
		{steps.FormatSeconds(5), "5 s"}, {steps.FormatSeconds(0.25), "0.25 s"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCellRowsIterations: aggregate steady names the unit and the named
// requests of an iteration cell.
func TestCellRowsIterations(t *testing.T) {
	in, _ := loadRun1(t)
	for _, row := range CellRows(Build(in, Options{})) {
		iter := row.Steady && (row.Scenario == schema.ScenarioAuthCode || row.Scenario == schema.ScenarioClientCredentialsLogin)
		if !iter {
			if row.Unit != "" || row.ByName != nil {
				t.Errorf("%s/%s: unit %q by_name %v on a request cell", row.Product, row.Scenario, row.Unit, row.ByName)
			}
			continue
		}
		if row.Unit != schema.CountIterations || len(row.ByName) < 2 {
			t.Fatalf("%s/%s: unit %q, by_name %v", row.Product, row.Scenario, row.Unit, row.ByName)
		}
		for name, nr := range row.ByName {
			if nr.Requests != row.Requests || nr.P50MS <= 0 || nr.P99MS < nr.P50MS || nr.P50MS >= row.P50MS {
				t.Errorf("%s/%s %s: %+v for %d iterations, iteration p50 %v", row.Product, row.Scenario, name, nr, row.Requests, row.P50MS)
			}
		}
	}
}

// TestStepFlagsWindow: a window in which nothing completed, and one under
// host steal, say so; a clean one has no flag.
func TestStepFlagsWindow(t *testing.T) {
	clean := step(4, 100, 0, false, schema.StatusComplete)
	clean.Scenario = schema.ScenarioUserinfo
	empty := step(32, 0, 0, false, schema.StatusComplete)
	empty.Scenario = schema.ScenarioUserinfo
	stolen := step(8, 90, 0, false, schema.StatusComplete)
	stolen.Scenario, stolen.Driver.HostStealPct = schema.ScenarioUserinfo, new(StealFlagPct+0.1)
	calm := step(8, 90, 0, false, schema.StatusComplete)
	calm.Scenario, calm.Driver.HostStealPct = schema.ScenarioUserinfo, new(StealFlagPct)
	for _, tt := range []struct {
		s    *schema.Step
		want []string
	}{
		{clean, nil}, {calm, nil},
		{empty, []string{"no request completed in the window"}},
		{stolen, []string{"host steal over 5%"}},
	} {
		if got := stepFlags(tt.s); !slices.Equal(got, tt.want) {
			t.Errorf("c=%d: flags %q, want %q", tt.s.Connections, got, tt.want)
		}
	}
}
