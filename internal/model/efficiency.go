package model

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// Efficiency is what one steady cell's requests cost in CPU: successful
// requests (iterations for an iteration scenario) per CPU-second of the
// IdP's process tree, and of the IdP plus PostgreSQL, over the measured
// windows of the steady level. It is the unit of Keycloak's sizing guide
// (requests per vCPU-second), independent of the machine's core count and
// of the CPU the load generator took.
type Efficiency struct {
	Scenario   schema.ScenarioInfo
	Product    string
	Iterations bool    // the cell counts iterations
	OK         int64   // successful requests of the windows with CPU figures
	Windows    int     // windows with IdP CPU figures, of the steady level's
	IdPCPUS    Figure  // IdP CPU-seconds over those windows
	DBCPUS     Figure  // PostgreSQL CPU-seconds over those windows
	PerIdP     Figure  // OK / IdPCPUS, requests per CPU-second
	PerStack   Figure  // OK / (IdPCPUS + DBCPUS), requests per CPU-second
	WindowS    float64 // total seconds of those windows
}

// maxGapFactor: consecutive records of a source farther apart than this
// many times the source's median spacing are a gap (a sampler restarted,
// or two files of a resumed run), not an interval to integrate.
const maxGapFactor = 3

// minCoverage is the fraction of a window the sampler's intervals must
// cover for its CPU-seconds to be estimated (the rest at the covered mean).
const minCoverage = 0.5

// CPUSeconds integrates a source's CPU over window w: each record's cpu_pct
// is its source's CPU since the previous record, so it holds over the
// interval (previous record, record], and the part of that interval inside
// w counts. Records are those of src that keep accepts (nil: all). An
// uncovered stretch of w (a missed tick) is taken at the covered mean.
// false with the reason when the intervals cover less than minCoverage of w.
func CPUSeconds(samples []schema.Sample, src string, keep func(schema.Sample) bool, w Window) (float64, string) {
	var recs []schema.Sample
	for _, s := range samples {
		if s.Source == src && (keep == nil || keep(s)) {
			recs = append(recs, s)
		}
	}
	slices.SortStableFunc(recs, func(a, b schema.Sample) int { return a.T.Compare(b.T) })
	maxGap := maxGapFactor * medianSpacing(recs)
	var cpuS, covered float64
	for i := 1; i < len(recs); i++ {
		from, to := recs[i-1].T, recs[i].T
		if to.Sub(from) > maxGap {
			continue
		}
		o := overlap(w, from, to)
		cpuS += recs[i].CPUPct / 100 * o
		covered += o
	}
	length := w.End.Sub(w.Start).Seconds()
	switch {
	case covered == 0:
		return 0, "no " + src + " samples inside the window"
	case covered < minCoverage*length:
		return 0, fmt.Sprintf("the %s samples cover %s of the %s window", src, steps.Secs(covered), steps.Secs(length))
	}
	return cpuS * length / covered, ""
}

// medianSpacing is the median time between consecutive records (0 for
// fewer than two).
func medianSpacing(recs []schema.Sample) time.Duration {
	var gaps []float64
	for i := 1; i < len(recs); i++ {
		gaps = append(gaps, float64(recs[i].T.Sub(recs[i-1].T)))
	}
	m, _ := stats.Median(gaps)
	return time.Duration(m)
}

// overlap is the seconds (from, to] shares with w.
func overlap(w Window, from, to time.Time) float64 {
	lo, hi := from, to
	if w.Start.After(lo) {
		lo = w.Start
	}
	if w.End.Before(hi) {
		hi = w.End
	}
	if !hi.After(lo) {
		return 0
	}
	return hi.Sub(lo).Seconds()
}

// cellEfficiency computes a steady cell's efficiency over its steady
// level's windows from samples, the product's records, with idp and db
// as the IdP's and PostgreSQL's sources. A window without IdP CPU figures
// is left out; when none has them every figure is N/A with the reason.
func cellEfficiency(c Cell, samples []schema.Sample, idp, db string) Efficiency {
	e := Efficiency{Scenario: c.Scenario, Product: c.Product, Iterations: c.Iterations()}
	l := c.SteadyWindows()
	switch {
	case l == nil:
		return e.na(cmp.Or(c.NAReason, "no steady state"))
	case idp == "":
		return e.na("no process samples")
	}
	var idpS, dbS float64
	var idpWhy, dbWhy string
	for _, i := range l.Steps {
		s := c.Ladder[i].Step
		w := Window{Start: s.Start, End: s.End}
		v, na := CPUSeconds(samples, idp, nil, w)
		if na != "" {
			idpWhy = cmp.Or(idpWhy, na)
			continue
		}
		dv, dna := CPUSeconds(samples, db, hasRSS, w)
		e.Windows, e.OK, e.WindowS = e.Windows+1, e.OK+s.OK, e.WindowS+w.End.Sub(w.Start).Seconds()
		idpS, dbS, dbWhy = idpS+v, dbS+dv, cmp.Or(dbWhy, dna)
	}
	if e.Windows == 0 {
		return e.na(cmp.Or(idpWhy, "no measured window"))
	}
	e.IdPCPUS, e.PerIdP = Figure{Value: idpS, OK: true}, perCPU(e.OK, idpS)
	if dbWhy != "" {
		if len(values(samples, db, hasRSS, cpuPct)) == 0 {
			dbWhy = dbNA(samples, db) // no database at all, or its processes unseen
		}
		e.DBCPUS, e.PerStack = Figure{NA: dbWhy}, Figure{NA: dbWhy}
		return e
	}
	e.DBCPUS, e.PerStack = Figure{Value: dbS, OK: true}, perCPU(e.OK, idpS+dbS)
	return e
}

// na makes every figure of e N/A with reason.
func (e Efficiency) na(reason string) Efficiency {
	f := Figure{NA: reason}
	e.IdPCPUS, e.DBCPUS, e.PerIdP, e.PerStack = f, f, f, f
	return e
}

// perCPU is ok / cpuS, N/A when no CPU was spent.
func perCPU(ok int64, cpuS float64) Figure {
	if cpuS <= 0 {
		return Figure{NA: "no CPU time in the window"}
	}
	return Figure{Value: float64(ok) / cpuS, OK: true}
}

// Usage over the run: percentiles over every measured window.

// RunUsage is a product's server CPU and memory over all its measured
// windows (every ladder step's, not only steady ones), as Zitadel's
// benchmark reports give them: CPU p50 / p99 / peak in percent of one core,
// memory p50 / peak in MiB (PSS where read, else RSS, as the memory table).
type RunUsage struct {
	Windows           int // measured windows of the product's ladder steps
	Records           int // sampler records inside them, all sources
	IdPCPU, DBCPU     CPUQuantiles
	IdPMem, DBMem     MemQuantiles
	IdPMemOf, DBMemOf string // MemPSS, MemRSS or MemCgroup: what the memory figures measure
	NA                string // why there are no figures at all ("" = some)
}

// CPUQuantiles is a CPU series' p50, p99 and peak, percent of one core.
type CPUQuantiles struct{ P50, P99, Peak Figure }

// MemQuantiles is a memory series' p50 and peak, MiB.
type MemQuantiles struct{ P50, Peak Figure }

// quantile is the q-quantile of vs (the empirical quantile: an observed
// value), N/A with na when vs is empty.
func quantile(vs []float64, q float64, na string) Figure {
	if len(vs) == 0 {
		return Figure{NA: na}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return Figure{Value: stat.Quantile(q, stat.Empirical, s, nil), OK: true}
}

func cpuQuantiles(vs []float64, na string) CPUQuantiles {
	return CPUQuantiles{P50: quantile(vs, 0.5, na), P99: quantile(vs, 0.99, na), Peak: maxFigure(vs, na)}
}

func memQuantiles(vs []float64, na string) MemQuantiles {
	return MemQuantiles{P50: quantile(vs, 0.5, na), Peak: maxFigure(vs, na)}
}

// ladderWindows are the measured windows of every ladder step of the
// product's cells.
func ladderWindows(cells []Cell, product string) []Window {
	var ws []Window
	for _, c := range cells {
		if c.Product != product {
			continue
		}
		for _, ls := range c.Ladder {
			ws = append(ws, Window{Start: ls.Step.Start, End: ls.Step.End})
		}
	}
	return ws
}

// runUsage computes the product's figures over its ladder windows ws from
// its records, with idp and db as the IdP's and PostgreSQL's sources.
func runUsage(ws []Window, samples []schema.Sample, idp, db string) RunUsage {
	u := RunUsage{Windows: len(ws)}
	in := steps.SamplesIn(samples, ws)
	u.Records = len(in)
	switch {
	case len(ws) == 0:
		u.NA = "no measured window"
	case len(samples) == 0:
		u.NA = "no sampler records"
	case len(in) == 0:
		u.NA = "no sampler records inside the measured windows"
	}
	if u.NA != "" {
		return u.na(u.NA)
	}
	const inWin = " inside the measured windows"
	idpNA := "no process samples"
	if idp != "" {
		idpNA = "no " + idp + " samples" + inWin
	}
	u.IdPCPU = cpuQuantiles(values(in, idp, nil, cpuPct), idpNA)
	keep, get, kind := memOf(in, idp)
	u.IdPMem, u.IdPMemOf = memQuantiles(values(in, idp, keep, get), idpNA), kind
	dna := dbNA(samples, db)
	u.DBCPU = cpuQuantiles(values(in, db, hasRSS, cpuPct), dna)
	keep, get, kind = memOf(in, db)
	u.DBMem, u.DBMemOf = memQuantiles(values(in, db, keep, get), dna), kind
	return u
}

// na makes every figure of u N/A with reason.
func (u RunUsage) na(reason string) RunUsage {
	u.NA = reason
	u.IdPCPU, u.DBCPU = cpuQuantiles(nil, reason), cpuQuantiles(nil, reason)
	u.IdPMem, u.DBMem = memQuantiles(nil, reason), memQuantiles(nil, reason)
	return u
}

// EfficiencyOf returns cell c's efficiency (every figure N/A with the
// reason when it has none).
func (r *Report) EfficiencyOf(c Cell) Efficiency {
	for _, res := range r.Resources {
		if e, ok := res.Efficiency[c.Scenario.Name]; ok && res.Product == c.Product {
			return e
		}
	}
	return Efficiency{Scenario: c.Scenario, Product: c.Product, Iterations: c.Iterations()}.na("no sampler records")
}

// EfficiencyChartName is the file name of a scenario's efficiency chart.
func EfficiencyChartName(scenario string) string {
	return "efficiency-" + fileSafe(scenario) + ".svg"
}

// efficiencyChart draws a scenario's requests per CPU-second: one group
// per product, a bar for the IdP and one for the IdP plus PostgreSQL.
// false when no cell of the scenario has an IdP figure.
func (r *Report) efficiencyChart(sc schema.ScenarioInfo) (ChartFile, bool) {
	idp := Series{Name: "IdP", Style: 0}
	stack := Series{Name: "IdP + PostgreSQL", Style: 1}
	var groups []string
	var pi, ps []Point
	for _, c := range r.Cells {
		if c.Scenario.Name != sc.Name {
			continue
		}
		e := r.EfficiencyOf(c)
		x := float64(len(groups))
		groups = append(groups, c.Product)
		if e.PerIdP.OK {
			pi = append(pi, Point{X: x, Y: e.PerIdP.Value})
		}
		if e.PerStack.OK {
			ps = append(ps, Point{X: x, Y: e.PerStack.Value})
		}
	}
	if len(pi) == 0 {
		return ChartFile{}, false
	}
	idp.Segments, stack.Segments = [][]Point{pi}, [][]Point{ps}
	series := []Series{idp}
	if len(ps) > 0 {
		series = append(series, stack)
	}
	unit := "requests"
	if schema.IterationScenario(sc.Name) {
		unit = "iterations"
	}
	title := fmt.Sprintf("%s %s: %s per CPU-second at steady state", sc.ID, sc.Name, unit)
	c := Chart{Title: title, Bars: true, Groups: groups, Series: series,
		Subtitle: "successful " + unit + " / CPU-seconds of the sampled process trees; no bar = N/A (main table says why)",
		XLabel:   "product (bars: the IdP's process tree; the IdP + PostgreSQL)",
		YLabel:   unit + " per CPU-second (1 CPU-second = one core busy for 1 s)"}
	return ChartFile{Name: EfficiencyChartName(sc.Name), Alt: title, Scenario: sc.Name, Chart: c}, true
}

// StepEfficiency is one step's efficiency over its own measured window,
// from samples (a sampler's records): the IdP is the step's product's
// process tree (IdPSource), PostgreSQL as DBSource finds it.
func StepEfficiency(sf StepFile, samples []schema.Sample) Efficiency {
	s := sf.Step
	c := Cell{Scenario: schema.ScenarioInfo{Name: s.Scenario}, Product: sf.Product(),
		Ladder: []LadderStep{{StepFile: sf}}, Levels: []Level{{Connections: s.Connections, Steps: []int{0}}}}
	samples = slices.SortedStableFunc(slices.Values(samples), func(a, b schema.Sample) int { return a.T.Compare(b.T) })
	return cellEfficiency(c, samples, IdPSource(c.Product, samples), DBSource(samples))
}

// EfficiencyRow is StepEfficiency as one JSON object (aggregate efficiency).
type EfficiencyRow struct {
	Step      string   `json:"step"`                       // the step file
	Product   string   `json:"product"`                    // the step's product
	IdPSource string   `json:"idp_source"`                 // the sampler source taken as the IdP
	OK        int64    `json:"ok"`                         // successful requests (iterations) of the window
	WindowS   float64  `json:"window_s"`                   // measured seconds
	IdPCPUS   *float64 `json:"idp_cpu_s,omitempty"`        // IdP CPU-seconds over the window
	DBCPUS    *float64 `json:"db_cpu_s,omitempty"`         // PostgreSQL CPU-seconds over the window
	PerIdP    *float64 `json:"req_per_cpu_s,omitempty"`    // ok / idp_cpu_s
	PerStack  *float64 `json:"req_per_cpu_s_pg,omitempty"` // ok / (idp_cpu_s + db_cpu_s)
	NA        string   `json:"na,omitempty"`               // why req_per_cpu_s is missing
	PGNA      string   `json:"pg_na,omitempty"`            // why req_per_cpu_s_pg is missing
}

// EfficiencyRowOf renders one step's efficiency as a row.
func EfficiencyRowOf(sf StepFile, samples []schema.Sample) EfficiencyRow {
	e := StepEfficiency(sf, samples)
	ptr := func(f Figure) *float64 {
		if !f.OK {
			return nil
		}
		return &f.Value
	}
	row := EfficiencyRow{Step: sf.Path, Product: e.Product, OK: e.OK, WindowS: e.WindowS,
		IdPCPUS: ptr(e.IdPCPUS), DBCPUS: ptr(e.DBCPUS), PerIdP: ptr(e.PerIdP), PerStack: ptr(e.PerStack),
		NA: e.PerIdP.NA, PGNA: e.PerStack.NA}
	row.IdPSource = IdPSource(e.Product, samples)
	return row
}

// KeycloakSizingGuide is the source of the requests-per-CPU-second unit.
const KeycloakSizingGuide = "https://www.keycloak.org/high-availability/single-cluster/concepts-memory-and-cpu-sizing"
