package model

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Pair is two products' capacity in one scenario compared round by round
// (docs/design-methodology.md, "Verdicts"): in every interleaved round each product
// measured one window at its level, seconds apart from the other's, so the
// ratio of the two windows holds little of the machine's drift; the pair's
// figure is the geometric mean of those ratios, with a t interval of the
// mean of their logarithms over the rounds (the variation between rounds
// is in it). An A/A pair is a product against its twin, the second window
// of the same cell in the same rounds.
type Pair struct {
	Scenario schema.ScenarioInfo
	A, B     string    // A over B; for an A/A pair B is A's twin
	Rounds   []int     // the rounds both measured, ascending
	Ratios   []float64 // A's window over B's in each of Rounds
	Interval           // Center: the geometric mean of Ratios; N: the rounds
}

// Verdicts of a pair (Pair.Verdict).
const (
	PairAFaster = "A faster"     // the interval lies above 1
	PairBFaster = "B faster"     // below 1
	PairNoise   = "within noise" // it holds 1
	PairNone    = "no interval"  // too few rounds
)

// Verdict says which product is faster, by the interval: above 1 A, below 1
// B, holding 1 within noise; no interval: too few rounds.
func (p Pair) Verdict() string {
	switch {
	case !p.OK():
		return PairNone
	case p.Lo > 1:
		return PairAFaster
	case p.Hi < 1:
		return PairBFaster
	}
	return PairNoise
}

// Covers1 reports whether the interval holds 1 (false without one).
func (p Pair) Covers1() bool { return p.OK() && p.Lo <= 1 && 1 <= p.Hi }

// MinPairRounds is the fewest rounds a pair's interval is taken over.
const MinPairRounds = 3

// PairedInterval is the geometric mean of ratios with a t interval at
// CapacityConfidence of the mean of their logarithms (Student's t with
// n-1 degrees of freedom): the rounds are the independent samples, each
// ratio one round's two windows. Fewer than MinPairRounds: the mean only.
func PairedInterval(ratios []float64) Interval {
	iv := Interval{N: len(ratios)}
	logs := make([]float64, 0, len(ratios))
	for _, r := range ratios {
		if !(r > 0) || math.IsInf(r, 0) {
			iv.NA = "a round without a ratio"
			return iv
		}
		logs = append(logs, math.Log(r))
	}
	if len(logs) == 0 {
		iv.NA = "no round measured both"
		return iv
	}
	mean, sd := stat.MeanStdDev(logs, nil)
	iv.Center = math.Exp(mean)
	if len(logs) < MinPairRounds {
		iv.NA = fmt.Sprintf("%s, no %.0f%% interval: needs %d", steps.Plural(len(logs), "round"), 100*CapacityConfidence, MinPairRounds)
		return iv
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(logs) - 1)}.Quantile(1 - (1-CapacityConfidence)/2)
	half := t * sd / math.Sqrt(float64(len(logs)))
	iv.Lo, iv.Hi = math.Exp(mean-half), math.Exp(mean+half)
	return iv
}

// roundWindows is each round's qualifying window (throughput) of a cell
// from round 2 on -- the interleaved rounds, one window a round -- from
// steps: the cell's ladder, or its twin's windows.
func roundWindows(files []StepFile, rule string) map[int]float64 {
	out := map[int]float64{}
	for _, f := range files {
		s := f.Step
		k, err := strconv.Atoi(s.Labels["repeat"])
		if err != nil || k < 2 || !steps.Qualifies(s) || !steps.JudgedBy(s, rule) {
			continue
		}
		if _, dup := out[k]; !dup {
			out[k] = s.QPS
		}
	}
	return out
}

// pairOf is a's windows over b's in the rounds both measured.
func pairOf(sc schema.ScenarioInfo, a, b string, wa, wb map[int]float64) Pair {
	p := Pair{Scenario: sc, A: a, B: b}
	for k := range wa {
		if qb, ok := wb[k]; ok && qb > 0 {
			p.Rounds = append(p.Rounds, k)
		}
	}
	slices.Sort(p.Rounds)
	for _, k := range p.Rounds {
		p.Ratios = append(p.Ratios, wa[k]/wb[k])
	}
	p.Interval = PairedInterval(p.Ratios)
	return p
}

// pairs computes, per scenario, every pair of products with windows in the
// interleaved rounds (A before B in Products order), and every A/A pair of
// a product and its twin.
func (r *Report) pairs() {
	twins := map[cellKey][]StepFile{}
	for _, sf := range r.Other {
		if sf.Step.Labels["phase"] == steps.PhaseTwin {
			k := cellKey{sf.Product(), sf.Step.Scenario}
			twins[k] = append(twins[k], sf)
		}
	}
	for _, sc := range r.Scenarios {
		rule := schema.ScenarioCheck(sc.Name)
		var names []string
		windows := map[string]map[int]float64{}
		for _, c := range r.Cells {
			if c.Scenario.Name != sc.Name || c.SteadyLevel < 0 {
				continue
			}
			var files []StepFile
			for _, ls := range c.Ladder {
				files = append(files, ls.StepFile)
			}
			if w := roundWindows(files, rule); len(w) > 0 {
				names, windows[c.Product] = append(names, c.Product), w
			}
			if t := roundWindows(twins[cellKey{c.Product, sc.Name}], rule); len(t) > 0 {
				r.Twins = append(r.Twins, pairOf(sc, c.Product, c.Product+" (twin)", windows[c.Product], t))
			}
		}
		for i, a := range names {
			for _, b := range names[i+1:] {
				r.Pairs = append(r.Pairs, pairOf(sc, a, b, windows[a], windows[b]))
			}
		}
	}
}

// Pair returns the pair of products a and b in scenario s, as a over b
// (the stored pair inverted when it is b over a); false without one.
func (r *Report) Pair(s, a, b string) (Pair, bool) {
	for _, p := range r.Pairs {
		switch {
		case p.Scenario.Name != s:
		case p.A == a && p.B == b:
			return p, true
		case p.A == b && p.B == a:
			return p.inverse(), true
		}
	}
	return Pair{}, false
}

// inverse is the pair read the other way: B over A.
func (p Pair) inverse() Pair {
	q := Pair{Scenario: p.Scenario, A: p.B, B: p.A, Rounds: p.Rounds, Interval: Interval{N: p.N, NA: p.NA}}
	for _, r := range p.Ratios {
		q.Ratios = append(q.Ratios, 1/r)
	}
	if p.Center > 0 {
		q.Center = 1 / p.Center
	}
	if p.OK() {
		q.Lo, q.Hi = 1/p.Hi, 1/p.Lo
	}
	return q
}
