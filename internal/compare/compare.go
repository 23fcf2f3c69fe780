// Package compare puts two idpbench runs side by side (aggregate compare):
// per product x scenario, the old and new throughput and latency with their
// spread, the difference, and whether it is significant.
//
// A sample is one measured window: each window of a step repeated with
// `ladder.sh --repeats N` is one independent measurement. A step's
// one-second intervals are not used as samples: they are not independent of
// each other (a window on a busy machine is slow in all its intervals), and
// a test on them called 5 of 8 pairs of back-to-back windows of one
// unchanged nginx different (UnitInterval keeps that test for studying
// noise; scripts/false-alarms.sh counts both).
//
// A cell is compared at OLD's steady level, chosen by the report's rule
// (steps.SelectSteadyLevel): of the levels whose every window is a steady
// state, the fewest connections whose throughput is within noise of the
// highest median.
package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Row statuses.
const (
	StatusCompared      = "compared"
	StatusOldOnly       = "old_only"       // the cell is in OLD only (or N/A in NEW)
	StatusNewOnly       = "new_only"       // the cell is in NEW only (or N/A in OLD)
	StatusNotComparable = "not_comparable" // both have it, but it measured different work
	StatusNA            = "na"             // N/A on both sides (no step measured it)
)

// Options configure Compare.
type Options struct {
	Alpha    float64 // significance level of the two-sided test; 0 = DefaultAlpha
	AllSteps bool    // every ladder level both sides have, not only the steady one
	// Unit is what one sample is: UnitWindow (default) or UnitInterval.
	Unit string
	// References are the reference products (products.References): each
	// cell's ratio to the first one a run measured, paired within its
	// rounds, is compared too (Row.Ref).
	References []string
}

// Sample units.
const (
	// UnitWindow: one sample per measured window (the default).
	UnitWindow = "window"
	// UnitInterval: one sample per full interval of every window. The
	// intervals of one window are not independent (a busy spell of the
	// machine slows them all), so a test on them calls most differences
	// between two windows of one unchanged target significant: for
	// studying noise (scripts/false-alarms.sh), not for verdicts.
	UnitInterval = "interval"
)

// DefaultAlpha is the significance level when Options.Alpha is 0.
const DefaultAlpha = 0.05

// Side is one input of the comparison: its name (as given) and its records.
type Side struct {
	Name   string
	Inputs *model.Inputs
}

// Row is one compared cell (or ladder level with AllSteps).
type Row struct {
	Product, Scenario string
	Connections       int
	RateRPS           float64
	Status            string   // StatusCompared ...
	Reason            string   // why a row is not compared
	Notes             []string // facts a reader needs beside the figures
	Old, New          *Figures // nil for the side that lacks the cell
	QPS, P50, P99     Delta    // set when Status is StatusCompared
	// Capacity is the capacities' difference (steady mode, both sides with
	// a capacity); nil otherwise.
	Capacity *CapacityDelta
	// Ref is the cell's ratio to the reference product, paired within each
	// run's interleaved rounds, in both runs; nil without one on a side.
	Ref *RefDelta
	// Reported is what each side's own report shows for the cell (steady
	// mode only): each side's steady level, which may differ.
	Reported *Reported
}

// CapacityDelta tests two capacities: the pooled plateau windows of each
// side, at OLD's reference host speed where both sides have a slope.
type CapacityDelta struct {
	Old, New Stat
	Delta
	Basis string // "at one host speed" or "raw"
}

// capacityDelta tests OLD's capacity windows against NEW's.
func capacityDelta(rep *Reported, newAtOld []float64, alpha float64) *CapacityDelta {
	if rep.OldCap == nil || rep.NewCap == nil {
		return nil
	}
	o, n, basis := rep.OldCap.QPS, rep.NewCap.QPS, "raw"
	if rep.OldCap.AdjQPS != nil && newAtOld != nil {
		o, n, basis = rep.OldCap.AdjQPS, newAtOld, "at one host speed"
	}
	cd := &CapacityDelta{Old: summarise(slices.Clone(o)), New: summarise(slices.Clone(n)), Basis: basis}
	cd.Delta = test(cd.Old, cd.New, alpha)
	return cd
}

// Reported is each side's own steady cell: the level its report picks and
// that level's figures; nil Figures where the side has no steady state.
type Reported struct {
	Old, New           *Figures
	OldLevel, NewLevel string // "c=8"; "" without a steady state
	// OldEff, NewEff: each side's requests (iterations) per CPU-second of
	// the IdP's process tree at its steady level, as its report's main
	// table shows it (model.Efficiency.PerIdP); N/A with the reason.
	OldEff, NewEff model.Figure
	// OldProbe, NewProbe: each side's host probe over the windows of its
	// steady level (model.Level.HostProbe, µs; N 0 without one).
	OldProbe, NewProbe steps.Spread
	// OldCap, NewCap: each side's capacity (model.Capacity), raw and at
	// its own run's reference host speed; NewCapAtOld is NEW's at OLD's
	// reference host speed (NEW's own slope), so the two adjusted figures
	// are at one host speed. Nil where a side has no steady state.
	OldCap, NewCap *model.Capacity
	NewCapAtOld    model.Interval
	// OldShares, NewShares: each side's latency at shares of its own
	// capacity (model.ShareLatency), by share.
	OldShares, NewShares []model.ShareLatency
}

// Key names the row: "hydra discovery c=8".
func (r Row) Key() string {
	return fmt.Sprintf("%s %s %s", r.Product, r.Scenario, levelName(r.Connections, r.RateRPS))
}

// Figures are one side's windows of one level.
type Figures struct {
	Files   []string // the step files, in time order
	Check   string   // the success rule the windows were judged by
	Version string   // product version(s) the windows name
	QPS     Stat     // requests (iterations) per second, per window
	P50MS   Stat     // per window, milliseconds
	P99MS   Stat
}

// Windows is the number of measured windows (samples) of the side.
func (f *Figures) Windows() int { return f.QPS.N }

// level is one ladder step of one side: every window measured at one
// connection count (and rate) of one product's scenario.
type level struct {
	product, scenario string
	connections       int
	rate              float64
	windows           []steps.File // in time order
	unit              string       // what a sample is (Options.Unit)
}

type cellKey struct{ product, scenario string }

type levelKey struct {
	cellKey
	connections int
	rate        float64
}

func levelName(c int, rate float64) string {
	switch {
	case c == 0:
		return "—"
	case rate > 0:
		return fmt.Sprintf("c=%d rate=%g/s", c, rate)
	}
	return fmt.Sprintf("c=%d", c)
}

// Compare matches the cells of old and new and tests each difference.
func Compare(old, new Side, opt Options) []Row {
	alpha := cmp.Or(opt.Alpha, DefaultAlpha)
	unit := cmp.Or(opt.Unit, UnitWindow)
	oc, nc := cells(old.Inputs, unit), cells(new.Inputs, unit)
	ob, nb := built(old.Inputs, opt.References), built(new.Inputs, opt.References)
	ona, nna := ob.na, nb.na
	seen := map[cellKey]bool{}
	var keys []cellKey
	for _, m := range []map[cellKey][]*level{oc, nc} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, m := range []map[cellKey]string{ona, nna} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b cellKey) int {
		return cmp.Or(cmp.Compare(a.product, b.product), compareScenarios(a.scenario, b.scenario))
	})
	var rows []Row
	for _, k := range keys {
		switch {
		case oc[k] == nil && nc[k] == nil:
			if cmp.Or(ona[k], model.NoResults) == model.NoResults && cmp.Or(nna[k], model.NoResults) == model.NoResults {
				continue // a core scenario neither run measured nor explained: not a cell of either
			}
			rows = append(rows, Row{Product: k.product, Scenario: k.scenario, Status: StatusNA, Reason: bothNA(ona[k], nna[k])})
			continue
		case opt.AllSteps:
			rows = append(rows, allSteps(k, oc[k], nc[k], alpha)...)
		default:
			row := steadyRow(k, oc[k], nc[k], alpha)
			row.Reported.OldEff, row.Reported.NewEff = ob.efficiency(k), nb.efficiency(k)
			row.Reported.OldProbe, row.Reported.NewProbe = ob.probe[k], nb.probe[k]
			row.Reported.OldCap, row.Reported.NewCap = ob.capacity[k], nb.capacity[k]
			row.Reported.OldShares, row.Reported.NewShares = ob.shares[k], nb.shares[k]
			var newAtOld []float64
			if c := nb.capacity[k]; c != nil {
				row.Reported.NewCapAtOld, newAtOld = c.AdjustedAt(nb.slopes[k.product], ob.hostRef)
			}
			row.Capacity = capacityDelta(row.Reported, newAtOld, alpha)
			if ob.ref != "" && ob.ref == nb.ref {
				row.Ref = refDelta(ob.ref, ob.toRef[k], nb.toRef[k], alpha)
			}
			rows = append(rows, row)
		}
		last := &rows[len(rows)-1]
		switch { // the N/A side's reason, when the report has one
		case oc[k] == nil && nc[k] != nil && ona[k] != "" && ona[k] != model.NoResults:
			last.Reason += ": " + ona[k]
		case nc[k] == nil && oc[k] != nil && nna[k] != "" && nna[k] != model.NoResults:
			last.Reason += ": " + nna[k]
		}
	}
	return rows
}

// bothNA explains a cell N/A on both sides: the reason once when they agree.
func bothNA(old, new string) string {
	old, new = cmp.Or(old, model.NoResults), cmp.Or(new, model.NoResults)
	if old == new {
		return old
	}
	return fmt.Sprintf("OLD: %s; NEW: %s", old, new)
}

// sideReport is what a side's own report says about its cells: the N/A
// reasons of the cells no ladder step measured (a product that could not
// run, a scenario it cannot do), and each measured cell's efficiency.
type sideReport struct {
	na    map[cellKey]string
	eff   map[cellKey]model.Efficiency
	probe map[cellKey]steps.Spread // the steady level's host probe
	// capacity is each cell's capacity (nil entries absent); slopes each
	// product's host slope; hostRef the run's reference probe.
	capacity map[cellKey]*model.Capacity
	shares   map[cellKey][]model.ShareLatency
	slopes   map[string]model.HostSlope
	hostRef  float64
	// ref is the first reference product with pairs in the run; toRef
	// each cell's ratio to it, round by round.
	ref   string
	toRef map[cellKey]*model.Pair
}

// built builds a side's report once.
func built(in *model.Inputs, refs []string) sideReport {
	r := model.Build(in, model.Options{References: refs})
	s := sideReport{na: map[cellKey]string{}, eff: map[cellKey]model.Efficiency{}, probe: map[cellKey]steps.Spread{},
		capacity: map[cellKey]*model.Capacity{}, shares: map[cellKey][]model.ShareLatency{}, slopes: map[string]model.HostSlope{}, hostRef: r.HostRefUS}
	for _, h := range r.Slopes {
		s.slopes[h.Product] = h
	}
	s.toRef = map[cellKey]*model.Pair{}
	for _, ref := range refs {
		for _, c := range r.Cells {
			if p, ok := r.Pair(c.Scenario.Name, c.Product, ref); ok && c.Product != ref {
				s.ref, s.toRef[cellKey{c.Product, c.Scenario.Name}] = ref, &p
			}
		}
		if s.ref != "" {
			break
		}
	}
	for _, c := range r.Cells {
		k := cellKey{c.Product, c.Scenario.Name}
		if len(c.Ladder) == 0 {
			s.na[k] = c.NAReason
			continue
		}
		s.eff[k] = r.EfficiencyOf(c)
		if l := c.SteadyWindows(); l != nil {
			s.probe[k] = l.HostProbe
			s.capacity[k] = &c.Capacity
			s.shares[k] = c.Shares
		}
	}
	return s
}

// efficiency is cell k's requests per IdP CPU-second, N/A with the reason.
func (s sideReport) efficiency(k cellKey) model.Figure {
	e, ok := s.eff[k]
	if !ok {
		return model.Figure{NA: "no steady state"}
	}
	return e.PerIdP
}

// compareScenarios orders scenarios as the report does (S1, S2 ...), unknown
// ones after them by name.
func compareScenarios(a, b string) int {
	ia, oka := schema.LookupScenario(a)
	ib, okb := schema.LookupScenario(b)
	switch {
	case oka && okb:
		return cmp.Compare(scenarioIndex(ia.Name), scenarioIndex(ib.Name))
	case oka:
		return -1
	case okb:
		return 1
	}
	return cmp.Compare(a, b)
}

func scenarioIndex(name string) int {
	return slices.IndexFunc(schema.Scenarios, func(s schema.ScenarioInfo) bool { return s.Name == name })
}

// cells groups the ladder steps of one side by product and scenario, and
// each cell's steps into levels (connections, rate) in ladder order.
func cells(in *model.Inputs, unit string) map[cellKey][]*level {
	byLevel := map[levelKey]*level{}
	out := map[cellKey][]*level{}
	for _, sf := range in.Steps {
		s := sf.Step
		if p := s.Labels["phase"]; p != "" && p != steps.PhaseLadder {
			continue
		}
		k := levelKey{cellKey{sf.Product(), s.Scenario}, s.Connections, s.RateRPS}
		l := byLevel[k]
		if l == nil {
			l = &level{product: k.product, scenario: k.scenario, connections: k.connections, rate: k.rate, unit: unit}
			byLevel[k] = l
			out[k.cellKey] = append(out[k.cellKey], l)
		}
		l.windows = append(l.windows, sf)
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b *level) int {
			return cmp.Or(cmp.Compare(a.connections, b.connections), cmp.Compare(a.rate, b.rate))
		})
		for _, l := range ls {
			slices.SortStableFunc(l.windows, func(a, b steps.File) int { return a.Step.Start.Compare(b.Step.Start) })
		}
	}
	return out
}

// steady picks a cell's steady level by the report's rule
// (steps.SelectSteadyLevel): of the levels whose every window qualifies,
// the fewest connections whose throughput is within noise of the highest
// median. It returns -1 and the report's reason when none qualifies.
func steady(ls []*level) (int, string) {
	rule := ""
	if len(ls) > 0 {
		rule = schema.ScenarioCheck(ls[0].scenario)
	}
	windows := make([][]*schema.Step, len(ls))
	for i, l := range ls {
		for _, w := range l.windows {
			windows[i] = append(windows[i], w.Step)
		}
	}
	return steps.SelectSteadyLevel(windows, rule)
}

// steadyRow compares OLD's steady level with the same level of NEW: the
// same work (connections, rate) measured on both. Where NEW's own steady
// level differs, a note says so.
func steadyRow(k cellKey, old, new []*level, alpha float64) Row {
	oi, owhy := steady(old)
	ni, nwhy := steady(new)
	row := steadyComparison(k, old, new, oi, ni, owhy, nwhy, alpha)
	row.Reported = &Reported{}
	if oi >= 0 {
		row.Reported.Old, row.Reported.OldLevel = figures(old[oi]), levelName(old[oi].connections, old[oi].rate)
	}
	if ni >= 0 {
		row.Reported.New, row.Reported.NewLevel = figures(new[ni]), levelName(new[ni].connections, new[ni].rate)
	}
	return row
}

// steadyComparison is steadyRow's comparison at OLD's steady level oi (NEW's
// own: ni; -1 with the reasons owhy, nwhy where a side has none).
func steadyComparison(k cellKey, old, new []*level, oi, ni int, owhy, nwhy string, alpha float64) Row {
	row := Row{Product: k.product, Scenario: k.scenario}
	switch {
	case len(old) == 0:
		return onlyRow(row, nil, new, ni, StatusNewOnly, "not in OLD")
	case len(new) == 0:
		return onlyRow(row, old, nil, oi, StatusOldOnly, "not in NEW")
	case oi < 0 && ni < 0:
		row.Status, row.Reason = StatusNotComparable, fmt.Sprintf("no steady state in OLD (%s) nor in NEW (%s)", owhy, nwhy)
		return row
	case oi < 0:
		return onlyRow(row, nil, new, ni, StatusNewOnly, "no steady state in OLD: "+owhy)
	}
	ol := old[oi]
	row.Connections, row.RateRPS = ol.connections, ol.rate
	nl := findLevel(new, ol.connections, ol.rate)
	switch {
	case ni < 0:
		row.Old = figures(ol)
		if nl != nil {
			row.New = figures(nl)
		}
		row.Status, row.Reason = StatusOldOnly, "no steady state in NEW: "+nwhy
		return row
	case nl == nil:
		row.Old, row.New = figures(ol), figures(new[ni])
		row.Status, row.Reason = StatusNotComparable, fmt.Sprintf("different connection counts: NEW has no step at OLD's steady %s (its steady state: %s)",
			levelName(ol.connections, ol.rate), levelName(new[ni].connections, new[ni].rate))
		return row
	}
	row = compareLevels(row, ol, nl, alpha)
	if nl != new[ni] {
		row.Notes = append(row.Notes, fmt.Sprintf("NEW's steady state is at %s", levelName(new[ni].connections, new[ni].rate)))
	}
	return row
}

// onlyRow is a cell one side lacks (or has no steady state in): its figures
// at its steady level when it has one.
func onlyRow(row Row, old, new []*level, i int, status, reason string) Row {
	row.Status, row.Reason = status, reason
	side := old
	if side == nil {
		side = new
	}
	if i >= 0 {
		l := side[i]
		row.Connections, row.RateRPS = l.connections, l.rate
		if old != nil {
			row.Old = figures(l)
		} else {
			row.New = figures(l)
		}
	}
	return row
}

// allSteps compares every level of a cell; levels one side lacks are listed.
func allSteps(k cellKey, old, new []*level, alpha float64) []Row {
	var rows []Row
	for _, ol := range old {
		row := Row{Product: k.product, Scenario: k.scenario, Connections: ol.connections, RateRPS: ol.rate}
		nl := findLevel(new, ol.connections, ol.rate)
		if nl == nil {
			row.Old, row.Status, row.Reason = figures(ol), StatusOldOnly, "not in NEW"
			rows = append(rows, row)
			continue
		}
		rows = append(rows, compareLevels(row, ol, nl, alpha))
	}
	for _, nl := range new {
		if findLevel(old, nl.connections, nl.rate) == nil {
			rows = append(rows, Row{Product: k.product, Scenario: k.scenario, Connections: nl.connections, RateRPS: nl.rate,
				New: figures(nl), Status: StatusNewOnly, Reason: "not in OLD"})
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Connections, b.Connections), cmp.Compare(a.RateRPS, b.RateRPS))
	})
	return rows
}

func findLevel(ls []*level, c int, rate float64) *level {
	for _, l := range ls {
		if l.connections == c && l.rate == rate {
			return l
		}
	}
	return nil
}

// unqualified says why a level's windows do not all measure a steady
// state -- its figures count failed requests, part of a window, or the
// driver's limit -- naming the first such window; "" when they all do.
func unqualified(l *level, side string) string {
	for i, w := range l.windows {
		s := w.Step
		var why string
		switch {
		case steps.Qualifies(s):
			continue
		case s.Status != schema.StatusComplete:
			why = "status " + s.Status
		case s.ErrorRate >= schema.SteadyMaxErrorRate:
			why = fmt.Sprintf("error rate %.2g%% (a steady state has below %g%%)", 100*s.ErrorRate, 100*schema.SteadyMaxErrorRate)
		case s.ConnectErrors.Total() > 0:
			why = fmt.Sprintf("%d failed connection attempts", s.ConnectErrors.Total())
		default:
			why = "driver-limited"
		}
		return fmt.Sprintf("%s window %d of %d at %s: %s", side, i+1, len(l.windows), levelName(l.connections, l.rate), why)
	}
	return ""
}

// compareLevels tests one level measured on both sides, unless the two
// measured different work.
func compareLevels(row Row, ol, nl *level, alpha float64) Row {
	row.Old, row.New = figures(ol), figures(nl)
	why := notComparable(ol, nl, row.Old, row.New)
	if why == "" {
		why = cmp.Or(unqualified(ol, "OLD"), unqualified(nl, "NEW"))
	}
	if why != "" {
		row.Status, row.Reason = StatusNotComparable, why
		return row
	}
	row.Status = StatusCompared
	row.QPS = test(row.Old.QPS, row.New.QPS, alpha)
	row.P50 = test(row.Old.P50MS, row.New.P50MS, alpha)
	row.P99 = test(row.Old.P99MS, row.New.P99MS, alpha)
	if d := durations(ol); d != durations(nl) {
		row.Notes = append(row.Notes, fmt.Sprintf("windows of %s (OLD) and %s (NEW)", d, durations(nl)))
	}
	return row
}

// notComparable says why two levels did not measure the same work: another
// success rule, another count unit or latency model; "" when they did.
func notComparable(ol, nl *level, of, nf *Figures) string {
	switch {
	case of.Check == mixed || nf.Check == mixed:
		return "the windows of one side were judged by different success rules"
	case of.Check != nf.Check:
		return fmt.Sprintf("judged by different success rules: %q (OLD) and %q (NEW)", of.Check, nf.Check)
	}
	o, n := ol.windows[0].Step, nl.windows[0].Step
	switch {
	case o.CountUnit != n.CountUnit:
		return fmt.Sprintf("counts different units: %q (OLD) and %q (NEW)", cmp.Or(o.CountUnit, "request"), cmp.Or(n.CountUnit, "request"))
	case o.LatencyModel != n.LatencyModel:
		return fmt.Sprintf("different latency models: %s (OLD) and %s (NEW)", o.LatencyModel, n.LatencyModel)
	}
	return ""
}

// mixed is Figures.Check of windows judged by different rules.
const mixed = "(mixed)"

// durations describes a level's measured windows: "10 s", or "3 s and 10 s".
func durations(l *level) string {
	var ds []float64
	for _, w := range l.windows {
		if !slices.Contains(ds, w.Step.DurationS) {
			ds = append(ds, w.Step.DurationS)
		}
	}
	slices.Sort(ds)
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%g s", d)
	}
	return strings.Join(out, " and ")
}

// figures summarises a level's windows.
func figures(l *level) *Figures {
	f := &Figures{}
	var qps, p50, p99 []float64
	var versions []string
	for i, w := range l.windows {
		s := w.Step
		f.Files = append(f.Files, w.Path)
		switch {
		case i == 0:
			f.Check = s.Check
		case f.Check != s.Check:
			f.Check = mixed
		}
		if s.ProductVersion != "" && !slices.Contains(versions, s.ProductVersion) {
			versions = append(versions, s.ProductVersion)
		}
		if l.unit == UnitInterval {
			qps, p50, p99 = appendIntervals(s, qps, p50, p99)
			continue
		}
		lat := latency(s)
		qps, p50, p99 = append(qps, s.QPS), append(p50, lat.P50), append(p99, lat.P99)
	}
	f.Version = strings.Join(versions, ", ")
	f.QPS, f.P50MS, f.P99MS = summarise(qps), summarise(p50), summarise(p99)
	return f
}

// appendIntervals appends the figures of every full interval of s (a last
// interval shorter than interval_s is left out: its rate is of fewer
// seconds), in the step's latency model.
func appendIntervals(s *schema.Step, qps, p50, p99 []float64) ([]float64, []float64, []float64) {
	for _, iv := range s.Intervals {
		if s.IntervalS > 0 && iv.LengthS > 0 && iv.LengthS < 0.99*s.IntervalS {
			continue
		}
		lo, hi := iv.P50MS, iv.P99MS
		if s.CorrectedLatencyMS != nil {
			lo, hi = iv.CorrectedP50MS, iv.CorrectedP99MS
		}
		qps, p50, p99 = append(qps, iv.QPS), append(p50, lo), append(p99, hi)
	}
	return qps, p50, p99
}

// latency is the figure of the step's latency model: in rate mode the
// latency from the intended send time.
func latency(s *schema.Step) schema.Latency {
	if s.CorrectedLatencyMS != nil {
		return *s.CorrectedLatencyMS
	}
	return s.LatencyMS
}
