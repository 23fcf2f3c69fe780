package model

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

var effT0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func effAt(sec float64) time.Time { return effT0.Add(time.Duration(sec * float64(time.Second))) }

// cpuRecords: a record of src every step seconds from `from` to `to`, each
// with cpu(t) percent of one core and an RSS (process figures visible).
func cpuRecords(src string, from, to, step float64, cpu func(t float64) float64) []schema.Sample {
	var out []schema.Sample
	for t := from; t <= to+1e-9; t += step {
		out = append(out, schema.Sample{Schema: schema.SampleV1, T: effAt(t), Source: src, CPUPct: cpu(t), RSSBytes: 100 << 20})
	}
	return out
}

func constant(v float64) func(float64) float64 { return func(float64) float64 { return v } }

// steadyCell is a cell whose steady level is the windows [start, start+10 s]
// with ok successful requests each.
func steadyCell(ok int64, starts ...float64) Cell {
	c := Cell{Scenario: schema.ScenarioInfo{ID: "S2", Name: schema.ScenarioClientCredentials}, Product: "hydra", SteadyLevel: 0, Steady: 0}
	var l Level
	for i, s := range starts {
		c.Ladder = append(c.Ladder, LadderStep{StepFile: StepFile{Path: "x.json",
			Step: &schema.Step{Start: effAt(s), End: effAt(s + 10), OK: ok, Requests: ok, Connections: 4}}})
		l.Steps = append(l.Steps, i)
	}
	c.Levels = []Level{l}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }

func TestCellEfficiency(t *testing.T) {
	idp := cpuRecords("process:hydra", -1, 11, 1, constant(50))
	pg := cpuRecords(SourcePostgres, -1, 11, 1, constant(25))
	tests := []struct {
		name            string
		cell            Cell
		samples         []schema.Sample
		idpSrc          string
		perIdP, perPG   float64 // 0 = N/A
		idpNA, pgNA     string  // wanted in the N/A reason
		idpCPUS, window float64
	}{
		{name: "IdP at 50% for 10 s, 1,000 ok", cell: steadyCell(1000, 0), samples: idp, idpSrc: "process:hydra",
			perIdP: 200, pgNA: "no postgres samples", idpCPUS: 5, window: 10},
		{name: "and PostgreSQL at 25%", cell: steadyCell(1000, 0), samples: append(append([]schema.Sample{}, idp...), pg...),
			idpSrc: "process:hydra", perIdP: 200, perPG: 1000 / 7.5, idpCPUS: 5, window: 10},
		{name: "two windows sum requests and CPU-seconds", cell: steadyCell(1000, 0, 20),
			samples: cpuRecords("process:hydra", -1, 31, 1, func(t float64) float64 { return map[bool]float64{true: 50, false: 100}[t <= 11] }),
			idpSrc:  "process:hydra", perIdP: 2000 / 15.0, pgNA: "no postgres samples", idpCPUS: 15, window: 20},
		{name: "records every 0.5 s, offset from the window", cell: steadyCell(1000, 0),
			samples: cpuRecords("process:hydra", -0.75, 11.25, 0.5, constant(50)), idpSrc: "process:hydra",
			perIdP: 200, pgNA: "no postgres samples", idpCPUS: 5, window: 10},
		{name: "no samples inside the window", cell: steadyCell(1000, 0), samples: cpuRecords("process:hydra", 20, 30, 1, constant(50)),
			idpSrc: "process:hydra", idpNA: "no process:hydra samples inside the window"},
		{name: "no process source at all", cell: steadyCell(1000, 0), idpNA: "no process samples"},
		{name: "samples cover 3 of 10 s", cell: steadyCell(1000, 0), samples: cpuRecords("process:hydra", 7, 13, 1, constant(50)),
			idpSrc: "process:hydra", idpNA: "cover 3 s of the 10 s window"},
		{name: "no steady state", cell: Cell{SteadyLevel: -1, Steady: -1, NAReason: "all steps driver-limited"},
			samples: idp, idpSrc: "process:hydra", idpNA: "all steps driver-limited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := cellEfficiency(tc.cell, tc.samples, tc.idpSrc, DBSource(tc.samples))
			checkFigure(t, "per IdP CPU-s", e.PerIdP, tc.perIdP, tc.idpNA)
			if tc.idpNA != "" {
				checkFigure(t, "per IdP+PG CPU-s", e.PerStack, 0, tc.idpNA)
				return
			}
			checkFigure(t, "per IdP+PG CPU-s", e.PerStack, tc.perPG, tc.pgNA)
			if !near(e.IdPCPUS.Value, tc.idpCPUS) || !near(e.WindowS, tc.window) {
				t.Errorf("IdP CPU-s %v over %v s, want %v over %v s", e.IdPCPUS.Value, e.WindowS, tc.idpCPUS, tc.window)
			}
		})
	}
}

func checkFigure(t *testing.T, what string, f Figure, want float64, na string) {
	t.Helper()
	switch {
	case na != "" && (f.OK || !strings.Contains(f.NA, na)):
		t.Errorf("%s = %+v, want N/A saying %q", what, f, na)
	case na == "" && want == 0 && f.OK:
		t.Errorf("%s = %+v, want N/A", what, f)
	case na == "" && want != 0 && (!f.OK || !near(f.Value, want)):
		t.Errorf("%s = %+v, want %v", what, f, want)
	}
}

// TestCPUSecondsSkipsGaps: records farther apart than maxGapFactor times
// the median spacing (a restarted sampler) are not an interval; the
// uncovered stretch is taken at the covered mean.
func TestCPUSecondsSkipsGaps(t *testing.T) {
	recs := append(cpuRecords("process:x", -1, 4, 1, constant(40)), cpuRecords("process:x", 9, 12, 1, constant(80))...)
	// covered: (0,4] at 40% = 1.6 CPU-s, (9,10] at 80% = 0.8; 5 s of 10 -> scaled by 2
	got, na := CPUSeconds(recs, "process:x", nil, Window{Start: effAt(0), End: effAt(10)})
	if na != "" || !near(got, 4.8) {
		t.Errorf("CPUSeconds = %v (%q), want 4.8", got, na)
	}
}

// TestRunUsage: percentiles over every ladder window, steady or not; PSS
// where the source has it; records outside the windows left out.
func TestRunUsage(t *testing.T) {
	var samples []schema.Sample
	for i := 1; i <= 200; i++ {
		s := schema.Sample{Schema: schema.SampleV1, T: effAt(float64(i)), Source: "process:hydra", CPUPct: float64(i), RSSBytes: 500 << 20}
		if i%2 == 0 {
			s.PSSBytes = int64(i) << 20
		}
		samples = append(samples, s,
			schema.Sample{Schema: schema.SampleV1, T: effAt(float64(i)), Source: SourcePostgres, CPUPct: 10, RSSBytes: int64(i) << 20})
	}
	ws := []Window{{Start: effAt(1), End: effAt(50)}, {Start: effAt(51), End: effAt(100)}} // records 101..200 are outside
	u := runUsage(ws, samples, "process:hydra", SourcePostgres)
	if u.NA != "" || u.Records != 200 || u.Windows != 2 {
		t.Fatalf("usage %+v, want 200 records in 2 windows", u)
	}
	for _, c := range []struct {
		what      string
		got, want Figure
	}{
		{"IdP CPU p50", u.IdPCPU.P50, Figure{Value: 50, OK: true}},
		{"IdP CPU p99", u.IdPCPU.P99, Figure{Value: 99, OK: true}},
		{"IdP CPU peak", u.IdPCPU.Peak, Figure{Value: 100, OK: true}},
		{"IdP MiB p50 (PSS: 2, 4 .. 100)", u.IdPMem.P50, Figure{Value: 50, OK: true}},
		{"IdP MiB peak", u.IdPMem.Peak, Figure{Value: 100, OK: true}},
		{"PostgreSQL CPU p99", u.DBCPU.P99, Figure{Value: 10, OK: true}},
		{"PostgreSQL MiB peak (RSS)", u.DBMem.Peak, Figure{Value: 100, OK: true}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.what, c.got, c.want)
		}
	}
	if u.IdPMemOf != MemPSS || u.DBMemOf != MemRSS {
		t.Errorf("measured as %s / %s, want PSS / RSS", u.IdPMemOf, u.DBMemOf)
	}
	none := runUsage(ws, samples[:0], "", SourcePostgres)
	if none.NA != "no sampler records" || none.IdPCPU.P50.OK {
		t.Errorf("without records: %+v", none)
	}
}

// TestStepEfficiency: one step's window, the IdP found as the step's
// product's process tree, as aggregate efficiency prints it.
func TestStepEfficiency(t *testing.T) {
	sf := StepFile{Path: "refop/discovery-c4.json", Step: &schema.Step{Product: "refop", Scenario: schema.ScenarioDiscovery,
		Start: effAt(0), End: effAt(10), OK: 1000, Requests: 1000}}
	samples := append(cpuRecords("process:refop", -1, 11, 1, constant(50)), cpuRecords("process:other", -1, 11, 1, constant(90))...)
	row := EfficiencyRowOf(sf, samples)
	if row.IdPSource != "process:refop" || row.PerIdP == nil || !near(*row.PerIdP, 200) || row.PerStack != nil || row.PGNA != "no postgres samples" {
		t.Errorf("row %+v, want 200 req/CPU-s of process:refop and no PostgreSQL figure", row)
	}
}
