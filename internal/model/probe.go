package model

import (
	"slices"
	"time"

	"github.com/idpbench/idpbench/internal/stats"
)

// probeIndex is the sampler's host probe runs (schema.Sample.ProbeUS) of a
// run, by time: the host records of every sampler file (one machine).
type probeIndex []probeRun

type probeRun struct {
	t  time.Time
	us float64
}

func newProbeIndex(files []SampleFile) probeIndex {
	var out probeIndex
	for _, f := range files {
		for _, s := range f.Samples {
			if s.Source == SourceHost && s.ProbeUS != nil {
				out = append(out, probeRun{s.T, *s.ProbeUS})
			}
		}
	}
	slices.SortFunc(out, func(a, b probeRun) int { return a.t.Compare(b.t) })
	return out
}

// window is the median probe (µs) of the runs in [start, end]; false with
// none.
func (p probeIndex) window(start, end time.Time) (float64, bool) {
	i, _ := slices.BinarySearchFunc(p, start, func(r probeRun, t time.Time) int { return r.t.Compare(t) })
	var us []float64
	for ; i < len(p) && !p[i].t.After(end); i++ {
		us = append(us, p[i].us)
	}
	return stats.Median(us)
}
