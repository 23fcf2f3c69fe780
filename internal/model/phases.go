package model

import (
	"cmp"
	"io"
	"slices"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// loadPhases reads a phases file line by line (its errors name the line).
func (in *Inputs) loadPhases(r io.Reader, path string) error {
	ps, err := schema.DecodePhases(r, path)
	if err != nil {
		return err
	}
	in.addPhases(path, ps...)
	return nil
}

// addPhases adds phase records of path, to its entry when it has one.
func (in *Inputs) addPhases(path string, ps ...schema.Phase) {
	if n := len(in.Phases); n > 0 && in.Phases[n-1].Path == path {
		in.Phases[n-1].Phases = append(in.Phases[n-1].Phases, ps...)
		return
	}
	in.Phases = append(in.Phases, PhaseFile{Path: path, Phases: ps})
}

// The rows of the time table, in order.
const (
	RowInstall   = "install"
	RowColdstart = "cold starts"
	RowSetup     = "setup"
	RowOverhead  = "pool minting and step overhead"
	RowWarmups   = "warmups"
	RowMeasured  = "measured windows"
	RowGCJitter  = "GC jitter"
	RowTeardown  = "teardown"
	RowBuild     = "build"
	RowDatabase  = "database"
	RowReport    = "report"
	RowOther     = "other"
	// RowUnrecorded is wall time of a session no phase record covers (an
	// append that failed); shown only when there is some.
	RowUnrecorded = "not in a recorded phase"
)

// timeRows are the rows every table shows; RowOther and RowUnrecorded
// follow when they hold time.
var timeRows = []string{RowInstall, RowColdstart, RowSetup, RowOverhead, RowWarmups, RowMeasured,
	RowGCJitter, RowTeardown, RowBuild, RowDatabase, RowReport}

// kindRows maps a phase kind to its row; a ladder is split into three.
var kindRows = map[string]string{
	schema.PhaseKindInstall: RowInstall, schema.PhaseKindColdstart: RowColdstart, schema.PhaseKindSetup: RowSetup,
	schema.PhaseKindGCJitter: RowGCJitter, schema.PhaseKindTeardown: RowTeardown, schema.PhaseKindBuild: RowBuild,
	schema.PhaseKindDatabase: RowDatabase, schema.PhaseKindReport: RowReport, schema.PhaseKindOther: RowOther,
}

// TimeUse is where a run's wall time went, from its phase records.
type TimeUse struct {
	Files    []string  // the phase files read
	Products []string  // product columns, in the order the run reached them
	Rows     []TimeRow // timeRows order, then RowOther and RowUnrecorded when they hold time
	Sessions int       // sessions of the run (a resumed run has several)
	// WallS is the run's wall time, seconds: the sum over its sessions of
	// each one's span from its first phase's start to its last phase's end.
	WallS float64
	// MeasuredS is the ladders' and the shares' measured windows, seconds; JitterMeasuredS
	// the GC-jitter runs' measured windows.
	MeasuredS, JitterMeasuredS float64
}

// TimeRow is one row of the time table: seconds by product ("" = run-wide).
type TimeRow struct {
	What string
	S    map[string]float64
}

// TotalS is the row's seconds over every column.
func (r TimeRow) TotalS() float64 {
	t := 0.0
	for _, s := range r.S {
		t += s
	}
	return t
}

// buildTimeUse splits the run's phases into the table's rows; nil without
// phase records (a run before phases.jsonl existed).
//
// A ladder phase (and a share phase: its windows at shares of capacity) is
// split by the steps of its product labelled phase=ladder (phase=share)
// whose measured window lies inside it: warmups are their
// warmup_s (at most the time from the phase's start to the window's),
// measured windows each window's end - start, and the rest of the phase is
// pool minting and step overhead. A step inside no phase counts nowhere.
func buildTimeUse(files []PhaseFile, recs []StepFile) *TimeUse {
	var phases []schema.Phase
	t := &TimeUse{}
	for _, f := range files {
		if !slices.Contains(t.Files, f.Path) {
			t.Files = append(t.Files, f.Path)
		}
		phases = append(phases, f.Phases...)
	}
	if len(phases) == 0 {
		return nil
	}
	slices.SortStableFunc(phases, func(a, b schema.Phase) int { return a.Start.Compare(b.Start) })
	rows := map[string]map[string]float64{}
	add := func(row, product string, s float64) {
		if rows[row] == nil {
			rows[row] = map[string]float64{}
		}
		rows[row][product] += s
	}
	for _, p := range phases {
		if p.Product != "" && !slices.Contains(t.Products, p.Product) {
			t.Products = append(t.Products, p.Product)
		}
		switch p.Kind {
		case schema.PhaseKindLadder, schema.PhaseKindShare:
			label := steps.PhaseLadder
			if p.Kind == schema.PhaseKindShare {
				label = steps.PhaseShare
			}
			warm, measured := windowsIn(p, recs, label)
			add(RowWarmups, p.Product, warm)
			add(RowMeasured, p.Product, measured)
			add(RowOverhead, p.Product, max(p.Seconds-warm-measured, 0))
			t.MeasuredS += measured
		case schema.PhaseKindGCJitter:
			_, measured := windowsIn(p, recs, steps.PhaseGCJitter)
			add(RowGCJitter, p.Product, p.Seconds)
			t.JitterMeasuredS += measured
		default:
			add(cmp.Or(kindRows[p.Kind], RowOther), p.Product, p.Seconds)
		}
	}
	t.WallS, t.Sessions = sessionsWall(phases)
	if gap := t.WallS - sumPhases(phases); gap > 0.5 {
		add(RowUnrecorded, "", gap)
	}
	t.WallS = max(t.WallS, sumPhases(phases)) // overlapping phases of a session must not exceed 100%
	for _, what := range append(slices.Clone(timeRows), RowOther, RowUnrecorded) {
		if rows[what] != nil || slices.Contains(timeRows, what) {
			t.Rows = append(t.Rows, TimeRow{What: what, S: rows[what]})
		}
	}
	return t
}

// windowsIn sums the warmups and measured windows of the product's steps
// with the phase label whose measured window lies inside phase p, seconds.
func windowsIn(p schema.Phase, recs []StepFile, label string) (warmS, measuredS float64) {
	for _, sf := range recs {
		s := sf.Step
		if sf.Product() != p.Product || s.Labels["phase"] != label || s.Start.IsZero() ||
			s.Start.Before(p.Start) || s.End.After(p.End) {
			continue
		}
		measuredS += s.End.Sub(s.Start).Seconds()
		warmS += min(s.WarmupS, s.Start.Sub(p.Start).Seconds())
	}
	return warmS, measuredS
}

// sessionsWall returns the sum over sessions of each one's span, seconds,
// and the number of sessions.
func sessionsWall(phases []schema.Phase) (float64, int) {
	type span struct{ start, end time.Time }
	spans := map[string]*span{}
	for _, p := range phases {
		sp := spans[p.Session]
		if sp == nil {
			spans[p.Session] = &span{p.Start, p.End}
			continue
		}
		if p.Start.Before(sp.start) {
			sp.start = p.Start
		}
		if p.End.After(sp.end) {
			sp.end = p.End
		}
	}
	wall := 0.0
	for _, sp := range spans {
		wall += sp.end.Sub(sp.start).Seconds()
	}
	return wall, len(spans)
}

func sumPhases(phases []schema.Phase) float64 {
	s := 0.0
	for _, p := range phases {
		s += p.Seconds
	}
	return s
}
