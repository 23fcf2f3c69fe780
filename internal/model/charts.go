package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// ChartFile is one chart of the report and the file name it is written as.
type ChartFile struct {
	Name     string // file name, e.g. "qps-discovery.svg"
	Alt      string // alternative text for the Markdown image
	Scenario string // "" for the GC-jitter chart
	Chart    Chart
}

// GCJitterChart is the file name of the GC-jitter chart.
const GCJitterChart = "gcjitter-p99.svg"

// charts builds the ladder charts (QPS and P99 against connections, one
// pair per scenario), each scenario's efficiency chart (requests per
// CPU-second at steady state, where some cell has CPU figures) and the
// GC-jitter chart. A chart without any data is
// not built; ChartsNA says why.
func (r *Report) charts() {
	style := map[string]int{}
	for i, p := range r.Products {
		style[p.Name] = i
	}
	for _, sc := range r.Scenarios {
		qps, p99 := r.ladderSeries(sc.Name, style)
		if len(qps) == 0 {
			r.ChartsNA = append(r.ChartsNA, fmt.Sprintf("%s %s: no product has a complete ladder step", sc.ID, sc.Name))
			continue
		}
		r.Charts = append(r.Charts, ladderChart(sc, "qps", qps), ladderChart(sc, "p99", p99))
		if cf, ok := r.efficiencyChart(sc); ok {
			r.Charts = append(r.Charts, cf)
		}
	}
	if series, sub := r.jitterSeries(style); len(series) > 0 {
		r.Charts = append(r.Charts, ChartFile{Name: GCJitterChart, Alt: "GC jitter: P99 per interval over time",
			Chart: Chart{Title: "GC jitter: P99 per interval over time", Subtitle: sub,
				XLabel: "time into the measured window (s), each interval at its middle", YLabel: "P99 latency per interval (ms)", Series: series}})
	} else {
		r.ChartsNA = append(r.ChartsNA, "GC jitter: no gcjitter record with intervals")
	}
}

// ladderSeries returns one QPS and one P99 series per product with complete
// ladder steps of the scenario. A connection count measured in several
// windows (or at several rates) shows the window of median QPS of its
// complete ones.
func (r *Report) ladderSeries(scenario string, style map[string]int) (qps, p99 []Series) {
	for _, c := range r.Cells {
		if c.Scenario.Name != scenario {
			continue
		}
		byC := chartSteps(c, schema.ScenarioCheck(scenario))
		if len(byC) == 0 {
			continue
		}
		var q, p []Point
		for _, n := range slices.Sorted(maps.Keys(byC)) {
			s := byC[n]
			q = append(q, Point{X: float64(n), Y: s.QPS, Hollow: s.Driver.Limited})
			p = append(p, Point{X: float64(n), Y: s.LatencyMS.P99, Hollow: s.Driver.Limited})
		}
		qps = append(qps, Series{Name: c.Product, Style: style[c.Product], Segments: [][]Point{q}})
		p99 = append(p99, Series{Name: c.Product, Style: style[c.Product], Segments: [][]Point{p}})
	}
	return qps, p99
}

// chartSteps picks per connection count the complete step judged by rule
// (a ladder judged by another is not drawn beside the others) of median qps.
func chartSteps(c Cell, rule string) map[int]*schema.Step {
	var recs []*schema.Step
	for _, ls := range c.Ladder {
		recs = append(recs, ls.Step)
	}
	byC := map[int][]int{}
	for i, s := range recs { // by connections, then start
		if s.Status == schema.StatusComplete && steps.JudgedBy(s, rule) {
			byC[s.Connections] = append(byC[s.Connections], i)
		}
	}
	out := map[int]*schema.Step{}
	for n, idx := range byC {
		out[n] = recs[medianWindow(Level{Steps: idx}, recs)]
	}
	return out
}

func ladderChart(sc schema.ScenarioInfo, kind string, series []Series) ChartFile {
	var ticks []float64
	hollow := false
	seen := map[float64]bool{}
	for _, s := range series {
		for _, p := range s.Points() {
			if !seen[p.X] {
				seen[p.X] = true
				ticks = append(ticks, p.X)
			}
			hollow = hollow || p.Hollow
		}
	}
	slices.Sort(ticks)
	sub := "complete ladder steps, one line per product"
	if hollow {
		sub += "; open marker = driver-limited (a lower bound)"
	}
	c := Chart{Subtitle: sub, XLabel: "connections (log2 scale)", XLog2: true, XTicks: ticks, Series: series}
	name := fmt.Sprintf("%s-%s.svg", kind, fileSafe(sc.Name))
	unit, what := "requests/s", "P99 latency (ms)"
	if schema.IterationScenario(sc.Name) {
		unit, what = "iterations/s", "P99 iteration latency (ms)"
	}
	if kind == "qps" {
		c.Title, c.YLabel = fmt.Sprintf("%s %s: throughput against connections", sc.ID, sc.Name), "throughput ("+unit+")"
	} else {
		c.Title, c.YLabel = fmt.Sprintf("%s %s: P99 latency against connections", sc.ID, sc.Name), what
	}
	return ChartFile{Name: name, Alt: c.Title, Scenario: sc.Name, Chart: c}
}

// jitterSeries returns one P99-over-time series per product with a
// gcjitter record; a break in the intervals breaks the line. sub names the
// scenario and connections of each.
func (r *Report) jitterSeries(style map[string]int) ([]Series, string) {
	var series []Series
	var what []string
	for _, j := range r.Jitter {
		if j.File.Step == nil || j.P99.N == 0 {
			continue
		}
		s := j.File.Step
		series = append(series, Series{Name: j.Product, Style: style[j.Product], Segments: jitterSegments(s)})
		what = append(what, fmt.Sprintf("%s: %s c=%d", j.Product, s.Scenario, s.Connections))
	}
	return series, strings.Join(what, "; ") + "; a break in a line is a gap in the intervals"
}

// jitterSegments places each interval's P99 at the interval's middle and
// starts a new segment after a gap or an interval without requests.
func jitterSegments(s *schema.Step) [][]Point {
	var segs [][]Point
	var cur []Point
	end := 0.0
	for _, iv := range s.Intervals {
		if iv.TS-end > steps.IntervalTolerance || iv.Requests == 0 {
			segs, cur = appendSeg(segs, cur), nil
		}
		if iv.Requests > 0 {
			cur = append(cur, Point{X: iv.TS + steps.IntervalLength(s, iv)/2, Y: iv.P99MS})
		}
		end = iv.TS + steps.IntervalLength(s, iv)
	}
	return appendSeg(segs, cur)
}

func appendSeg(segs [][]Point, seg []Point) [][]Point {
	if len(seg) == 0 {
		return segs
	}
	return append(segs, seg)
}

// fileSafe keeps letters, digits, '-' and '_' of a scenario name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
