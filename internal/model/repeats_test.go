package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
)

// repeatInputs are recordtest.Repeats as the model's inputs.
func repeatInputs(t *testing.T) *Inputs {
	records, samples := recordtest.Repeats(t)
	return &Inputs{Steps: records, Samples: []SampleFile{{Path: recordtest.RepeatsSampler, Samples: samples}}}
}

func TestRepeatsSteadyLevel(t *testing.T) {
	r := Build(repeatInputs(t), Options{})
	tests := []struct {
		scenario string
		steadyC  int
		median   float64 // the steady level's median qps
		unstable bool
	}{
		{"discovery", 8, 4040, false},          // c=32's median 4080 is within noise; c=64 has a limited window
		{"client_credentials", 32, 440, false}, // significantly above c=8
		{"userinfo", 4, 3350, true},            // 3000 is 10.4% below the median
	}
	windows := 0
	for _, tc := range tests {
		c := cellOf(t, r, "hydra", tc.scenario)
		l := c.SteadyWindows()
		if l == nil {
			t.Fatalf("%s: no steady level (%s)", tc.scenario, c.NAReason)
		}
		windows += l.Windows()
		if l.Connections != tc.steadyC || l.QPS.Median != tc.median || l.Windows() != 5 || l.Unstable() != tc.unstable {
			t.Errorf("%s: steady c=%d median %g, %d windows, unstable %v; want c=%d median %g, 5 windows, unstable %v",
				tc.scenario, l.Connections, l.QPS.Median, l.Windows(), l.Unstable(), tc.steadyC, tc.median, tc.unstable)
		}
		if s := c.SteadyStep().Step; s.QPS != tc.median || s.Connections != tc.steadyC {
			t.Errorf("%s: Cell.Steady is c=%d qps %g, want the median window (c=%d, %g)", tc.scenario, s.Connections, s.QPS, tc.steadyC, tc.median)
		}
	}
	if f := cellOf(t, r, "hydra", "discovery").Levels[3].Flags; !slices.Contains(f, "driver-limited (1 of 5 windows)") {
		t.Errorf("c=64 flags %q, want the limited window counted", f)
	}
	// Resources: every window of the steady levels, one sampler record of
	// the process each, and userinfo's 5 a host record too.
	if res := r.Resources[0]; res.Windows != windows || res.InWindows != windows+5 {
		t.Errorf("resources over %d windows with %d records, want %d and %d", res.Windows, res.InWindows, windows, windows+5)
	}
}

func TestRepeatsCellRows(t *testing.T) {
	for _, row := range CellRows(Build(repeatInputs(t), Options{})) {
		if row.Scenario != "userinfo" {
			continue
		}
		if !row.Steady || row.Windows != 5 || row.QPS != 3350 || !row.Unstable || row.QPSSpreadPct < 10.4 || row.QPSSpreadPct > 10.5 {
			t.Errorf("userinfo row %+v: want 5 windows, qps 3350, unstable with a spread of 10.4%%", row)
		}
		return
	}
	t.Error("no userinfo row")
}

// An unstable level says how far the host's own speed moved between its
// windows (the host probe); a level whose windows recorded no probe says
// nothing of it.
func TestRepeatsUnstableHostProbe(t *testing.T) {
	r := Build(repeatInputs(t), Options{})
	l := cellOf(t, r, "hydra", "userinfo").SteadyWindows()
	want := "unstable: qps spread 10.4% > 10% (host probe spread 15.0%; at one host speed 2.7%)"
	if l == nil || !slices.Contains(l.Flags, want) {
		t.Fatalf("userinfo's steady level: flags %v, want %q", l.Flags, want)
	}
	for _, f := range cellOf(t, r, "hydra", "discovery").SteadyWindows().Flags {
		if strings.Contains(f, "host probe") {
			t.Errorf("discovery recorded no probe, but its flag says %q", f)
		}
	}
}

// TestRepeatsSessions: a run resumed after its second round (two sessions
// in phases.jsonl) flags every level whose windows span both, with how
// many; one session flags none.
func TestRepeatsSessions(t *testing.T) {
	in := repeatInputs(t)
	perRound := time.Duration(recordtest.RepeatsPerRound()) * 20 * time.Second
	cut := recordtest.FixtureStart.Add(2 * perRound)
	session := func(id string, start, end time.Time) schema.Phase {
		return schema.NewPhase(id, "hydra", schema.PhaseKindLadder, "hydra ladder", start, end)
	}
	in.Phases = []PhaseFile{{Path: "testdata/repeats/phases.jsonl", Phases: []schema.Phase{
		session("s1", recordtest.FixtureStart.Add(-time.Second), cut.Add(-time.Second)),
		session("s2", cut, recordtest.FixtureStart.Add(5*perRound)),
	}}}
	const want = "windows from 2 sessions: the product was started again between them (a resumed run)"
	for _, c := range Build(in, Options{}).Cells {
		for _, l := range c.Levels {
			if !slices.Contains(l.Flags, want) || l.Sessions != 2 {
				t.Errorf("%s c=%d: sessions %d, flags %v; want %q", c.Scenario.Name, l.Connections, l.Sessions, l.Flags, want)
			}
		}
	}
	in.Phases[0].Phases = in.Phases[0].Phases[:1]
	in.Phases[0].Phases[0].End = recordtest.FixtureStart.Add(5 * perRound)
	for _, c := range Build(in, Options{}).Cells {
		for _, l := range c.Levels {
			if l.Sessions != 1 || slices.ContainsFunc(l.Flags, func(f string) bool { return strings.Contains(f, "sessions") }) {
				t.Errorf("one session: %s c=%d: sessions %d, flags %v", c.Scenario.Name, l.Connections, l.Sessions, l.Flags)
			}
		}
	}
}

func cellOf(t *testing.T, r *Report, product, scenario string) Cell {
	t.Helper()
	for _, c := range r.Cells {
		if c.Product == product && c.Scenario.Name == scenario {
			return c
		}
	}
	t.Fatalf("no cell %s/%s", product, scenario)
	return Cell{}
}

// A chart draws a connection count measured in several windows at its
// window of median qps, not at the last window.
func TestRepeatsChartMedianWindow(t *testing.T) {
	r := Build(repeatInputs(t), Options{})
	want := map[float64]float64{2: 2000, 8: 4040, 32: 4080, 64: 4300}
	for _, cf := range r.Charts {
		if cf.Name != "qps-discovery.svg" {
			continue
		}
		pts := cf.Chart.Series[0].Points()
		for _, p := range pts {
			if want[p.X] != p.Y {
				t.Errorf("c=%g drawn at %g qps, want the median window's %g", p.X, p.Y, want[p.X])
			}
		}
		if len(pts) != len(want) {
			t.Errorf("%d points, want %d", len(pts), len(want))
		}
		return
	}
	t.Error("no qps-discovery chart")
}
