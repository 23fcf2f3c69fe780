package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// VerdictRow is one scenario's answer to "who is faster, by how much, how
// sure": its products of the comparison by capacity, each with its paired
// ratio to the fastest (Pair), and the reference products apart, this
// machine's protocol ceiling rather than contestants.
type VerdictRow struct {
	Scenario  schema.ScenarioInfo
	Ranked    []Ranked // the products of the comparison with a capacity, fastest first
	Reference []Ranked // the reference products with a capacity
	NA        []string // the products of the comparison without one here
}

// Ranked is one product in a VerdictRow.
type Ranked struct {
	Product  string
	Capacity Interval // the main table's (Capacity.Headline)
	// Rounds is the geometric mean of its windows in the interleaved
	// rounds, what the row ranks by (the pairs' basis); 0 without any.
	Rounds float64
	// ToFastest is the product over the row's fastest, round by round; the
	// fastest's own is zero. HasPair: the rounds measured both.
	ToFastest Pair
	HasPair   bool
}

// verdicts builds a row per scenario with a capacity anywhere, ranking by
// the geometric mean of each product's windows in the interleaved rounds
// (what its pairs compare), the headline capacity where it has none.
func (r *Report) verdicts() {
	for _, sc := range r.Scenarios {
		row := VerdictRow{Scenario: sc}
		rule := schema.ScenarioCheck(sc.Name)
		for _, c := range r.Cells {
			if c.Scenario.Name != sc.Name {
				continue
			}
			var files []StepFile
			for _, ls := range c.Ladder {
				files = append(files, ls.StepFile)
			}
			x := Ranked{Product: c.Product, Capacity: c.Capacity.Headline(), Rounds: geoMean(roundWindows(files, rule))}
			switch {
			case c.SteadyLevel < 0 && !slices.Contains(r.References, c.Product):
				row.NA = append(row.NA, c.Product)
			case c.SteadyLevel < 0:
			case slices.Contains(r.References, c.Product):
				row.Reference = append(row.Reference, x)
			default:
				row.Ranked = append(row.Ranked, x)
			}
		}
		if len(row.Ranked)+len(row.Reference) == 0 {
			continue
		}
		slices.SortStableFunc(row.Ranked, func(a, b Ranked) int { return cmp.Compare(b.rankBy(), a.rankBy()) })
		if len(row.Ranked) > 0 {
			fastest := row.Ranked[0].Product
			for i := range row.Ranked[1:] {
				x := &row.Ranked[i+1]
				x.ToFastest, x.HasPair = r.Pair(sc.Name, x.Product, fastest)
			}
			for i := range row.Reference {
				x := &row.Reference[i]
				x.ToFastest, x.HasPair = r.Pair(sc.Name, x.Product, fastest)
			}
		}
		r.Verdicts = append(r.Verdicts, row)
	}
}

// rankBy is what a row ranks x by: its rounds' geometric mean, else its
// capacity.
func (x Ranked) rankBy() float64 { return cmp.Or(x.Rounds, x.Capacity.Center) }

// geoMean is the geometric mean of the values of m, 0 without any.
func geoMean(m map[int]float64) float64 {
	if len(m) == 0 {
		return 0
	}
	var sum float64
	for _, v := range m {
		sum += math.Log(v)
	}
	return math.Exp(sum / float64(len(m)))
}

// rounds is the most rounds any pair has.
func (r *Report) InterleavedRounds() int {
	n := 0
	for _, p := range r.Pairs {
		n = max(n, p.N)
	}
	return n
}

// measuredReferences are the reference products this run measured.
func (r *Report) MeasuredReferences() []string {
	var out []string
	for _, p := range r.Products {
		if slices.Contains(r.References, p.Name) && !p.NA {
			out = append(out, p.Name)
		}
	}
	return out
}

// VerdictChart is the file name of the first screen's chart.
const VerdictChart = "verdict.svg"

// VerdictMultiples is the first screen's chart: a panel per scenario, a bar
// per product at its capacity with its interval, the reference greyed.
func (r *Report) VerdictMultiples() Multiples {
	style := map[string]int{}
	for i, p := range r.Products {
		style[p.Name] = i
	}
	m := Multiples{Title: "Capacity by scenario, on a log axis per panel",
		Subtitle: fmt.Sprintf("bars: capacity (requests or iterations/s), whiskers its 95%% interval over %s; × of the scenario's fastest, paired by round; grey: the reference OP (the ceiling)", steps.Plural(r.InterleavedRounds(), "interleaved round")),
		XLabel:   "requests (S2l, S4: iterations) per second"}
	for _, v := range r.Verdicts {
		p := Panel{Title: v.Scenario.ID + " " + v.Scenario.Name}
		for i, x := range v.Ranked {
			note := "fastest"
			if i > 0 {
				note = ratioNote(x)
			}
			p.Bars = append(p.Bars, Bar{Label: x.Product, Value: x.Capacity.Center, Lo: x.Capacity.Lo, Hi: x.Capacity.Hi, Style: style[x.Product], Note: note})
		}
		for _, x := range v.Reference {
			p.Bars = append(p.Bars, Bar{Label: x.Product, Value: x.Capacity.Center, Lo: x.Capacity.Lo, Hi: x.Capacity.Hi, Muted: true, Note: "ceiling"})
		}
		m.Panels = append(m.Panels, p)
	}
	return m
}

// ratioNote is a ranked product's ratio to the fastest, short: "0.68×",
// "0.97× ~" within noise, "0.9× ?" without an interval.
func ratioNote(x Ranked) string {
	if !x.HasPair || x.ToFastest.N == 0 {
		return ""
	}
	s := FormatRatio(x.ToFastest.Center)
	switch x.ToFastest.Verdict() {
	case PairNoise:
		s += " ~"
	case PairNone:
		s += " ?"
	}
	return s
}
