package steps

import (
	"fmt"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
)

// SelectSteady picks a ladder's steady-state step (docs/design-methodology.md, Steady level): among the
// complete steps judged by rule (schema.Step.Check; "" = any rule) with
// error_rate below schema.SteadyMaxErrorRate that were not driver-limited,
// the one with the highest qps (the fewer connections on a tie, as steps
// come in ladder order). It returns the index into steps, or -1 and why no
// step qualifies.
func SelectSteady(steps []*schema.Step, rule string) (int, string) {
	best := -1
	for i, s := range steps {
		if JudgedBy(s, rule) && Qualifies(s) && (best < 0 || s.QPS > steps[best].QPS) {
			best = i
		}
	}
	if best >= 0 {
		return best, ""
	}
	var judged []*schema.Step
	for _, s := range steps {
		if JudgedBy(s, rule) {
			judged = append(judged, s)
		}
	}
	if len(steps) > 0 && len(judged) == 0 {
		return -1, otherRuleReason(steps[0], rule)
	}
	return -1, noSteadyReason(judged)
}

// JudgedBy reports whether s was judged by rule ("" = any rule).
func JudgedBy(s *schema.Step, rule string) bool {
	return rule == "" || s.Check == rule
}

// otherRuleReason explains a ladder none of whose steps was judged by the
// scenario's rule: its numbers count different work, so they are not shown.
func otherRuleReason(s *schema.Step, rule string) string {
	if s.Check == "" {
		return fmt.Sprintf("its steps record no success rule (an older loadstep): not comparable with the rule %q", rule)
	}
	return fmt.Sprintf("judged by %q, not the scenario's rule %q: not comparable", s.Check, rule)
}

// Qualifies reports whether a step may be a steady state: complete, with
// requests (a window in which none completed measured nothing), below
// schema.SteadyMaxErrorRate errors, every connection attempt answered, and
// not driver-limited (SelectSteady's rule, without the success rule).
func Qualifies(s *schema.Step) bool {
	return s.Status == schema.StatusComplete && s.Requests > 0 && BelowErrors(s) && Reachable(s) && !s.Driver.Limited
}

// Reachable: no connection attempt of the window failed. A step whose
// target refused connections for a while measured part of a window only.
func Reachable(s *schema.Step) bool {
	return s.ConnectErrors.Total() == 0
}

func BelowErrors(s *schema.Step) bool {
	return s.ErrorRate < schema.SteadyMaxErrorRate
}

// noSteadyReason explains why no step of a ladder qualifies.
func noSteadyReason(steps []*schema.Step) string {
	var complete, below, reached []*schema.Step
	ended := 0 // complete windows, with or without requests
	for _, s := range steps {
		if s.Status != schema.StatusComplete {
			continue
		}
		ended++
		if s.Requests == 0 {
			continue // measured nothing: flagged "no request completed"
		}
		complete = append(complete, s)
		if BelowErrors(s) {
			below = append(below, s)
			if Reachable(s) {
				reached = append(reached, s)
			}
		}
	}
	switch {
	case len(steps) == 0:
		return "no results"
	case ended == 0:
		return "no complete step (" + statusCounts(steps) + ")"
	case len(complete) == 0:
		return "no request completed in any window (every request outlived its window)"
	case len(below) == 0:
		b := leastErrors(complete)
		return fmt.Sprintf("no step below %s errors (best: c=%d, %s errors)",
			FormatPct(schema.SteadyMaxErrorRate), b.Connections, FormatPct(b.ErrorRate))
	case len(reached) == 0:
		return fmt.Sprintf("every step below %s errors had failed connection attempts (the target was unreachable for part of the window)",
			FormatPct(schema.SteadyMaxErrorRate))
	}
	// Every complete step below the error threshold the target answered
	// throughout was driver-limited.
	below = reached
	h := highestQPS(below)
	what := "every step below " + FormatPct(schema.SteadyMaxErrorRate) + " errors is driver-limited"
	if allLimited(complete) {
		what = "all steps driver-limited"
	}
	return fmt.Sprintf("%s (lower bound: c=%d, %s qps)", what, h.Connections, FormatQPS(h.QPS))
}

func allLimited(steps []*schema.Step) bool {
	for _, s := range steps {
		if !s.Driver.Limited {
			return false
		}
	}
	return true
}

// leastErrors returns the step with the lowest error rate (higher qps on a tie).
func leastErrors(steps []*schema.Step) *schema.Step {
	b := steps[0]
	for _, s := range steps[1:] {
		if s.ErrorRate < b.ErrorRate || (s.ErrorRate == b.ErrorRate && s.QPS > b.QPS) {
			b = s
		}
	}
	return b
}

func highestQPS(steps []*schema.Step) *schema.Step {
	b := steps[0]
	for _, s := range steps[1:] {
		if s.QPS > b.QPS {
			b = s
		}
	}
	return b
}

// statusCounts renders "2 interrupted, 1 error".
func statusCounts(steps []*schema.Step) string {
	counts := map[string]int{}
	var order []string
	for _, s := range steps {
		if counts[s.Status] == 0 {
			order = append(order, s.Status)
		}
		counts[s.Status]++
	}
	out := ""
	for i, st := range order {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%d %s", counts[st], st)
	}
	return out
}

// NoiseAlpha is the significance level at which SelectSteadyLevel tells a
// level's throughput from the best one's.
const NoiseAlpha = 0.05

// noiseWindows is the fewest windows per level that give a Mann-Whitney
// noise estimate: two-sided Mann-Whitney U needs 4 and 4 to reach a p-value
// below NoiseAlpha.
const noiseWindows = 4

// rangeWindows is the fewest windows per level whose [min, max] range of qps
// stands for its noise where Mann-Whitney cannot: 2 or 3 windows.
const rangeWindows = 2

// preferWindows is the number of windows from which a level is preferred:
// when some levels have this many or more (the candidates the ladder,
// internal/ladder.Run, repeats), the steady level is chosen among them.
const preferWindows = 3

// SelectSteadyLevel picks a ladder's steady level: levels are in ladder
// order (by connections), each the windows measured at one connection count
// (and rate). It is the first level of the plateau (Plateau): the fewest
// connections whose throughput cannot be told from the best's. It returns
// the index into levels, or -1 and SelectSteady's reason when no level
// qualifies.
func SelectSteadyLevel(levels [][]*schema.Step, rule string) (int, string) {
	p, why := Plateau(levels, rule)
	if len(p) == 0 {
		return -1, why
	}
	return p[0], ""
}

// Plateau returns the levels of a ladder whose throughput cannot be told
// from the best's, in ladder order: the capacity's levels (Capacity). A
// level qualifies when every window was judged by rule and Qualifies. When
// some qualifying levels have 3 or more windows (the candidates later
// rounds repeat), only those are considered. The best is the considered
// level with the highest median qps (the fewer connections on a tie); a
// considered level is on the plateau when it is the best or its throughput
// is within noise of the best's: with 4 or more windows each, a two-sided
// Mann-Whitney U test finds no difference at NoiseAlpha; with 2 or more
// each but fewer than 4 on one side, the [min, max] ranges of their window
// qps overlap. A level of one window has no noise estimate, so only the
// best itself is (single-window ladders: SelectSteady's pick). Without a
// qualifying level it returns nil and SelectSteady's reason.
func Plateau(levels [][]*schema.Step, rule string) ([]int, string) {
	var ok []int
	for i, ws := range levels {
		if LevelQualifies(ws, rule) {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil, noSteadyLevelReason(levels, rule)
	}
	if many := slices.DeleteFunc(slices.Clone(ok), func(i int) bool { return len(levels[i]) < preferWindows }); len(many) > 0 {
		ok = many
	}
	best := ok[0]
	for _, i := range ok[1:] {
		if medianQPS(levels[i]) > medianQPS(levels[best]) {
			best = i
		}
	}
	var out []int
	for _, i := range ok {
		if i == best || withinNoise(levels[i], levels[best]) {
			out = append(out, i)
		}
	}
	return out, ""
}

// noSteadyLevelReason explains a ladder without a qualifying level:
// SelectSteady's reason, or, when some windows qualify on their own, the
// first level with such windows and how many of them do.
func noSteadyLevelReason(levels [][]*schema.Step, rule string) string {
	if _, why := SelectSteady(slices.Concat(levels...), rule); why != "" {
		return why
	}
	for _, ws := range levels {
		n := 0
		for _, s := range ws {
			if JudgedBy(s, rule) && Qualifies(s) {
				n++
			}
		}
		if n > 0 {
			return fmt.Sprintf("no connection count all of whose windows are a steady state (c=%d: %d of %d)", ws[0].Connections, n, len(ws))
		}
	}
	return "no results"
}

// LevelQualifies: the level has windows, every one judged by rule and a
// steady state.
func LevelQualifies(ws []*schema.Step, rule string) bool {
	for _, s := range ws {
		if !JudgedBy(s, rule) || !Qualifies(s) {
			return false
		}
	}
	return len(ws) > 0
}

func medianQPS(ws []*schema.Step) float64 {
	m, _ := stats.Median(qpsOf(ws))
	return m
}

func qpsOf(ws []*schema.Step) []float64 {
	vs := make([]float64, len(ws))
	for i, s := range ws {
		vs[i] = s.QPS
	}
	return vs
}

// withinNoise reports whether the throughputs of two levels do not differ
// beyond their noise: with at least noiseWindows windows each, a two-sided
// Mann-Whitney U test (benchmath.AssumeNothing as benchstat and aggregate
// compare use it) finds no difference at NoiseAlpha; with at least
// rangeWindows each but fewer than noiseWindows on one side, the [min, max]
// ranges of their window qps overlap; with fewer, never.
func withinNoise(a, b []*schema.Step) bool {
	switch n := min(len(a), len(b)); {
	case n >= noiseWindows:
		return mannWhitneySame(a, b)
	case n >= rangeWindows:
		return rangesOverlap(qpsOf(a), qpsOf(b))
	}
	return false
}

// rangesOverlap: [min(a), max(a)] and [min(b), max(b)] share a value.
func rangesOverlap(a, b []float64) bool {
	return slices.Min(a) <= slices.Max(b) && slices.Min(b) <= slices.Max(a)
}

func mannWhitneySame(a, b []*schema.Step) bool {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = NoiseAlpha
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(qpsOf(a), &th), benchmath.NewSample(qpsOf(b), &th))
	// The p-values are sums of floats: allow their rounding error, as
	// aggregate compare does.
	const pTolerance = 1e-9
	return c.P > NoiseAlpha+pTolerance
}
