package model

import (
	"cmp"
	"fmt"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Cold start modes (schema.Coldstart.Mode).
const (
	ColdstartFresh   = "A" // fresh database, initialisation and migrations included
	ColdstartRestart = "B" // initialised database, product restarted
)

// Coldstart is one product's cold start in one mode, or why there is none.
type Coldstart struct {
	Mode string
	File ColdstartFile // zero without a record
	NA   string        // "" when SecondsToReady and PeakRSSBytes are meaningful
}

// peakOfContainers: the record's peak is of containers (compose mode).
func (c Coldstart) PeakOfContainers() bool {
	return c.NA == "" && c.File.Coldstart != nil && c.File.Coldstart.PeakMeasuredAs == schema.PeakCgroup
}

// coldstartFor picks the product's latest record of a mode. A record whose
// status is not complete has no meaningful time to ready.
func coldstartFor(files []ColdstartFile, product, mode string) Coldstart {
	c := Coldstart{Mode: mode, NA: fmt.Sprintf("no coldstart-%s record", mode)}
	found := false
	for _, f := range files {
		rec := f.Coldstart
		if cmp.Or(rec.Product, steps.DirProduct(f.Path)) != product || rec.Mode != mode {
			continue
		}
		if !found || rec.Start.After(c.File.Coldstart.Start) {
			c.File, found = f, true
		}
	}
	if !found {
		return c
	}
	rec := c.File.Coldstart
	c.NA = ""
	if rec.Status != schema.StatusComplete {
		c.NA = fmt.Sprintf("status %s: %s", cmp.Or(rec.Status, "missing"), cmp.Or(rec.Error, "no reason given"))
	}
	return c
}

// Jitter is one product's GC-jitter run: the spread of its interval P99s.
type Jitter struct {
	Product string
	File    StepFile // zero without a record
	P99     Spread   // of the P99 of every interval that has requests, ms
	Gaps    []string // breaks in the interval series (steps.IntervalGaps)
	Older   int      // further gcjitter records of the product, not shown
	NA      string
}

// jitterFor picks the product's latest gcjitter step.
func jitterFor(other []StepFile, product string) Jitter {
	j := Jitter{Product: product, NA: "no gcjitter record"}
	var found []StepFile
	for _, sf := range other {
		if sf.Product() == product && sf.Step.Labels["phase"] == steps.PhaseGCJitter {
			found = append(found, sf)
		}
	}
	if len(found) == 0 {
		return j
	}
	j.File, j.Older = found[0], len(found)-1
	for _, sf := range found[1:] {
		if sf.Step.Start.After(j.File.Step.Start) {
			j.File = sf
		}
	}
	s := j.File.Step
	j.Gaps = steps.IntervalGaps(s)
	j.P99 = steps.SpreadOf(intervalP99s(s))
	switch {
	case s.Status == schema.StatusError:
		j.NA = "status error: " + cmp.Or(s.Error, "no reason given")
	case j.P99.N == 0:
		j.NA = "no interval with requests"
	default:
		j.NA = ""
	}
	return j
}

// intervalP99s returns the P99 of every interval with requests, ms.
func intervalP99s(s *schema.Step) []float64 {
	var out []float64
	for _, iv := range s.Intervals {
		if iv.Requests > 0 {
			out = append(out, iv.P99MS)
		}
	}
	return out
}
