package model

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// CapacityConfidence is the confidence level of a capacity's interval.
const CapacityConfidence = 0.95

// Capacity is a cell's throughput read as the product's capacity
// (docs/design-methodology.md, "Capacity"): estimated from the windows of every level on
// the plateau (Plateau), not from one level, as their median with a
// distribution-free 95% interval. Raw is the windows' qps as measured;
// Adjusted is each window's qps at the run's reference host speed
// (HostSlope.Adjust), which takes out the part of the noise the host probe
// measured.
type Capacity struct {
	Levels   []int     // indexes into Cell.Levels of the plateau, in ladder order
	QPS      []float64 // the pooled windows' qps, level by level, in time order
	Probes   []float64 // their host probes (µs), 0 where a window has none
	Raw      Interval
	Adjusted Interval  // NA says why where there is no adjusted figure
	AdjQPS   []float64 // the windows' qps at the reference probe, in QPS order; nil when Adjusted is NA
}

// HeadlineQPS is the windows of the Headline figure.
func (c Capacity) HeadlineQPS() []float64 {
	if c.HeadlineIsAdjusted() {
		return c.AdjQPS
	}
	return c.QPS
}

// Windows is the number of pooled windows.
func (c Capacity) Windows() int { return len(c.QPS) }

// Headline is the capacity the main table leads with: at one host speed
// where HeadlineAdjusted and the cell has an adjusted figure, else raw.
func (c Capacity) Headline() Interval {
	if c.HeadlineIsAdjusted() {
		return c.Adjusted
	}
	return c.Raw
}

// HeadlineIsAdjusted reports whether Headline is the adjusted figure.
func (c Capacity) HeadlineIsAdjusted() bool {
	return HeadlineAdjusted && c.Adjusted.N > 0
}

// HeadlineAdjusted says whether the main table leads with the capacity at
// one host speed rather than the raw one. The rule: the adjusted
// figure leads only where two back-to-back runs show that it agrees better
// than raw; the evidence is results/reference/REPRODUCE.md ("Capacity").
const HeadlineAdjusted = true

// Interval is a median with its distribution-free confidence interval
// (benchmath.AssumeNothing, as benchstat computes it).
type Interval struct {
	N              int // samples
	Center, Lo, Hi float64
	NA             string // why there is no interval; Center is still the median when N > 0
}

// OK reports whether the interval exists.
func (iv Interval) OK() bool { return iv.NA == "" }

// HalfPct is the interval's half-width in percent of its center: the
// farther of its ends (0 without an interval).
func (iv Interval) HalfPct() float64 {
	if !iv.OK() || iv.Center == 0 {
		return 0
	}
	return 100 * math.Max(iv.Hi/iv.Center-1, 1-iv.Lo/iv.Center)
}

// MinIntervalSamples is the fewest samples whose median has a
// distribution-free interval at CapacityConfidence: with n samples the
// widest one, [min, max], covers the median with 1 - 2·0.5ⁿ (n = 6: 96.9%).
var MinIntervalSamples = func() int {
	n := 1
	for 1-2*math.Pow(0.5, float64(n)) < CapacityConfidence {
		n++
	}
	return n
}()

// MedianInterval is the median of vs with its distribution-free interval at
// CapacityConfidence; NA names the shortfall below MinIntervalSamples.
func MedianInterval(vs []float64) Interval {
	if len(vs) == 0 {
		return Interval{NA: "no windows"}
	}
	med, _ := stats.Median(vs)
	if len(vs) < MinIntervalSamples {
		return Interval{N: len(vs), Center: med, NA: fmt.Sprintf("%s, no %.0f%% interval: needs %d",
			steps.Plural(len(vs), "window"), 100*CapacityConfidence, MinIntervalSamples)}
	}
	th := benchmath.DefaultThresholds
	// NewSample sorts its values in place: give it a copy, so the
	// caller's windows keep their order (and their probes).
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vs), &th), CapacityConfidence)
	return Interval{N: len(vs), Center: s.Center, Lo: s.Lo, Hi: s.Hi}
}

// HostSlope is how a product's throughput follows the machine's speed in
// one run: the slope of ln qps on ln host probe within its levels (each
// window's deviation from its level's mean, over every qualifying level of
// several windows with probes), the regression that CUPED and covariate
// adjustment use. -1 is one to one: a window on cores 10% slower does 10%
// less work.
type HostSlope struct {
	Product string
	Slope   float64
	Windows int     // the windows it was estimated from
	Corr    float64 // the correlation of the deviations
	NA      string  // why there is no slope (too few windows with probes)
}

// minSlopeWindows is the fewest windows a slope is estimated from.
const minSlopeWindows = 10

// SteepestSlope is the steepest slope a product's throughput can have on
// the machine's speed: a window on cores 10% slower does at most about 10%
// less work when the product is bound by its CPU, less when it waits on
// something else, so a fitted slope below -SteepestSlope (or above 0)
// says the product's throughput moved with something besides the cores'
// speed that the probe happened to follow (a drift of the product's own
// over the run, its own load on the machine), and adjusting by it would
// amplify that. Such a
// slope is N/A and the product's capacities stay raw.
const SteepestSlope = 1.5

// Adjust is qps at the reference probe ref (µs): qps · (probe/ref)^-Slope.
// A window without a probe (probe 0) cannot be adjusted.
func (h HostSlope) Adjust(qps, probe, ref float64) (float64, bool) {
	if h.NA != "" || probe <= 0 || ref <= 0 {
		return 0, false
	}
	return qps * math.Exp(-h.Slope*math.Log(probe/ref)), true
}

// AdjustedAt is the capacity's windows at the reference probe ref with the
// product's slope h: its Adjusted interval, or NA with the reason.
func (c Capacity) AdjustedAt(h HostSlope, ref float64) (Interval, []float64) {
	if h.NA != "" {
		return Interval{NA: "no host slope: " + h.NA}, nil
	}
	var adj []float64
	for i, q := range c.QPS {
		a, ok := h.Adjust(q, c.Probes[i], ref)
		if !ok {
			return Interval{NA: fmt.Sprintf("%d of %d windows have no host probe", countZero(c.Probes), len(c.Probes))}, nil
		}
		adj = append(adj, a)
	}
	return MedianInterval(adj), adj
}

func countZero(vs []float64) int {
	n := 0
	for _, v := range vs {
		if v == 0 {
			n++
		}
	}
	return n
}

// capacityOf pools the windows of the plateau's levels.
func capacityOf(plateau []int, levels []Level, recs []*schema.Step) Capacity {
	c := Capacity{Levels: plateau}
	for _, li := range plateau {
		l := levels[li]
		for k, si := range l.Steps {
			c.QPS = append(c.QPS, recs[si].QPS)
			c.Probes = append(c.Probes, l.Probes[k])
		}
	}
	c.Raw = MedianInterval(c.QPS)
	return c
}

// hostModel estimates every product's HostSlope and the run's reference
// probe (the median over every ladder window with a probe), and sets each
// cell's adjusted capacity.
func (r *Report) hostModel() {
	var all []float64
	for _, c := range r.Cells {
		for _, l := range c.Levels {
			all = append(all, slices.DeleteFunc(slices.Clone(l.Probes), func(v float64) bool { return v == 0 })...)
		}
	}
	r.HostRefUS, _ = stats.Median(all)
	for _, p := range r.Products {
		r.Slopes = append(r.Slopes, slopeOf(p.Name, r.Cells))
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.SteadyLevel < 0 {
			continue
		}
		c.Capacity.Adjusted, c.Capacity.AdjQPS = c.Capacity.AdjustedAt(r.SlopeOf(c.Product), r.HostRefUS)
	}
}

// SlopeOf is the product's HostSlope (NA for a product the report does not know).
func (r *Report) SlopeOf(product string) HostSlope {
	for _, h := range r.Slopes {
		if h.Product == product {
			return h
		}
	}
	return HostSlope{Product: product, NA: "unknown product"}
}

// slopeOf regresses the within-level deviations of ln qps on those of ln
// probe over the product's qualifying levels of several windows, every one
// with a probe.
func slopeOf(product string, cells []Cell) HostSlope {
	h := HostSlope{Product: product}
	var sxy, sxx, syy float64
	for _, c := range cells {
		if c.Product != product {
			continue
		}
		rule := schema.ScenarioCheck(c.Scenario.Name)
		for _, l := range c.Levels {
			if len(l.Steps) < 2 || slices.Contains(l.Probes, 0) {
				continue
			}
			var ws []*schema.Step
			for _, i := range l.Steps {
				ws = append(ws, c.Ladder[i].Step)
			}
			if !steps.LevelQualifies(ws, rule) {
				continue
			}
			var mx, my float64
			for k, s := range ws {
				mx += math.Log(l.Probes[k])
				my += math.Log(s.QPS)
			}
			mx, my = mx/float64(len(ws)), my/float64(len(ws))
			for k, s := range ws {
				dx, dy := math.Log(l.Probes[k])-mx, math.Log(s.QPS)-my
				sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
				h.Windows++
			}
		}
	}
	switch {
	case h.Windows < minSlopeWindows:
		h.NA = fmt.Sprintf("%d windows in levels of several windows with a host probe: the slope needs %d", h.Windows, minSlopeWindows)
	case sxx == 0:
		h.NA = "the host probe did not move within any level"
	default:
		h.Slope = sxy / sxx
		if syy > 0 {
			h.Corr = sxy / math.Sqrt(sxx*syy)
		}
		if h.Slope < -SteepestSlope || h.Slope > 0 {
			h.NA = fmt.Sprintf("slope %.2f (r %.2f, %d windows) outside [-%g, 0]: the probe moved with something other than the cores' speed, so the capacities stay raw",
				h.Slope, h.Corr, h.Windows, SteepestSlope)
		}
	}
	return h
}
