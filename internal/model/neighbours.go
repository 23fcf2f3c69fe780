package model

import (
	"slices"
	"strconv"

	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// Neighbour is what running the products side by side costs in fairness
// (docs/design-methodology.md, "The schedule"): one product's own process tree while
// the others' windows of the interleaved rounds ran, idle but up, from its
// sampler.
type Neighbour struct {
	Product string
	Windows int // the others' windows its samples fall in
	Samples int
	// CPUPct is its CPU in those windows, percent of one core: the median
	// and the largest sample; RSSMiB its median resident memory, MiB.
	CPUMedian, CPUMax, RSSMiB float64
}

// neighbours computes each product's Neighbour over the interleaved
// rounds' windows (label repeat >= 2) of the other products; none without
// such windows or samples.
func (r *Report) Neighbours() []Neighbour {
	known := map[string]bool{}
	for _, p := range r.Products {
		known[p.Name] = true
	}
	windows := map[string][]steps.Window{} // by product
	for _, c := range r.Cells {
		for _, ls := range c.Ladder {
			if k, err := strconv.Atoi(ls.Step.Labels["repeat"]); err == nil && k >= 2 {
				windows[c.Product] = append(windows[c.Product], steps.Window{Start: ls.Step.Start, End: ls.Step.End})
			}
		}
	}
	var out []Neighbour
	for _, p := range r.Products {
		var others []steps.Window
		for q, ws := range windows {
			if q != p.Name {
				others = append(others, ws...)
			}
		}
		if len(others) == 0 {
			continue
		}
		_, samples := productSamples(r.Samples, p.Name, known)
		src := IdPSource(p.Name, samples)
		var cpu, rss []float64
		for _, s := range steps.SamplesIn(samples, others) {
			if s.Source == src {
				cpu, rss = append(cpu, s.CPUPct), append(rss, float64(s.RSSBytes)/(1<<20))
			}
		}
		if len(cpu) == 0 {
			continue
		}
		n := Neighbour{Product: p.Name, Windows: len(others), Samples: len(cpu), CPUMax: slices.Max(cpu)}
		n.CPUMedian, _ = stats.Median(cpu)
		n.RSSMiB, _ = stats.Median(rss)
		out = append(out, n)
	}
	return out
}
