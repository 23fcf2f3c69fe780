package ladder

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// DefaultNoisePct is the throughput gain, in percent of the best qps so far,
// below which a level counts as not raising it.
const DefaultNoisePct = 5.0

// MinLevels is the fewest levels the knee rule looks at: it never stops a
// ladder before it has measured them.
const MinLevels = 3

// Decision is the knee rule's verdict on a ladder measured so far.
type Decision struct {
	Stop bool
	// Reason says in words why the ladder stops, or why it goes on.
	Reason string
}

// Knee applies the knee rule to round 1's steps so far, in ladder order: the
// ladder stops when each of the last flat levels (2, or 1; see
// Config.KneeFlat) raised the best throughput before them by less than
// noisePct percent -- a level that is not a steady state
// (Steady: errors, an interrupted or failed window, failed connects,
// driver-limited, another success rule) counts as not raising it -- and the
// last level's P99 is above the P99 of the best level before those two;
// never before MinLevels levels. The best level is the steady one of
// highest qps (the fewer connections on a tie). Both of the last two are
// compared with it, not the last with the one before: a plateau that creeps
// up by a little less than the noise per level is not a plateau for long.
func Knee(recs []*schema.Step, noisePct float64, flat int) Decision {
	n := len(recs)
	if n < MinLevels {
		return Decision{Reason: fmt.Sprintf("%d of the %d levels the rule needs at least", n, MinLevels)}
	}
	if flat != 1 {
		flat = 2
	}
	ref := best(recs[:n-flat])
	var last []string
	for k := n - flat; k < n; k++ {
		if gained(recs[k], recs, ref, noisePct) {
			return Decision{Reason: gainText(recs[k], recs, ref)}
		}
		last = append(last, levelText(recs[k]))
	}
	if ref < 0 {
		// None of the last levels qualifies, nor any before them.
		return Decision{Reason: "no level is a steady state yet"}
	}
	r, lastStep := recs[ref], recs[n-1]
	flatText := fmt.Sprintf("%s added < %s%% to c=%d's %s qps", strings.Join(last, " and "),
		formatNum(noisePct), r.Connections, steps.FormatQPS(r.QPS))
	p99 := fmt.Sprintf("%s -> %s ms", steps.FormatMS(r.LatencyMS.P99), steps.FormatMS(lastStep.LatencyMS.P99))
	if lastStep.LatencyMS.P99 <= r.LatencyMS.P99 {
		return Decision{Reason: flatText + " but P99 did not rise (" + p99 + ")"}
	}
	return Decision{Stop: true, Reason: flatText + " while P99 rose " + p99}
}

// FirstKnee returns the number of levels after which the knee rule first
// stops the ladder (0 = it does not stop within steps) and that decision,
// or the decision on all of steps when it does not stop.
func FirstKnee(recs []*schema.Step, noisePct float64, flat int) (int, Decision) {
	for k := MinLevels; k <= len(recs); k++ {
		if d := Knee(recs[:k], noisePct, flat); d.Stop {
			return k, d
		}
	}
	return 0, Knee(recs, noisePct, flat)
}

// gained reports whether s raised the qps of steps[ref], the best level
// before the last two, by at least noisePct percent; with no steady level
// before them, a steady s raises it.
func gained(s *schema.Step, recs []*schema.Step, ref int, noisePct float64) bool {
	if !Steady(s) {
		return false
	}
	return ref < 0 || s.QPS >= recs[ref].QPS*(1+noisePct/100)
}

func gainText(s *schema.Step, recs []*schema.Step, ref int) string {
	if ref < 0 {
		return fmt.Sprintf("c=%d is the first steady level (%s qps)", s.Connections, steps.FormatQPS(s.QPS))
	}
	r := recs[ref]
	return fmt.Sprintf("c=%d added %s%% to c=%d's %s qps", s.Connections,
		formatNum((s.QPS/r.QPS-1)*100), r.Connections, steps.FormatQPS(r.QPS))
}

// levelText is "c=64", with why the level is not a steady state when it is not.
func levelText(s *schema.Step) string {
	if why := notSteady(s); why != "" {
		return fmt.Sprintf("c=%d (%s)", s.Connections, why)
	}
	return fmt.Sprintf("c=%d", s.Connections)
}

// Steady reports whether a step may be a steady state: steps.Qualifies,
// and judged by its scenario's success rule.
func Steady(s *schema.Step) bool {
	return notSteady(s) == ""
}

// notSteady says why a step is not a steady state, "" when it is one.
func notSteady(s *schema.Step) string {
	rule := schema.ScenarioCheck(s.Scenario)
	switch {
	case rule != "" && s.Check != rule:
		return fmt.Sprintf("judged by %q, not %q", s.Check, rule)
	case steps.Qualifies(s):
		return ""
	case s.Status != schema.StatusComplete:
		return s.Status
	case s.ErrorRate >= schema.SteadyMaxErrorRate:
		return fmt.Sprintf("%s%% errors", formatNum(s.ErrorRate*100))
	case s.ConnectErrors.Total() > 0:
		return "failed connects"
	case s.Driver.Limited:
		return "driver-limited"
	}
	return "not a steady state"
}

// best returns the index of the steady step of highest qps (the first on
// a tie), -1 when none is steady.
func best(recs []*schema.Step) int {
	b := -1
	for i, s := range recs {
		if Steady(s) && (b < 0 || s.QPS > recs[b].QPS) {
			b = i
		}
	}
	return b
}

// CandidateWithinPct is how close, in percent of the best level's qps, a
// level with fewer connections must come to be repeated beside it.
const CandidateWithinPct = 10.0

// MaxLowerCandidates is how many levels below the best one are repeated at most.
const MaxLowerCandidates = 2

// Candidates returns the connection counts later rounds repeat, ascending:
// the best steady level of round 1 and the steady levels with fewer
// connections whose qps is within CandidateWithinPct of it, at most the
// MaxLowerCandidates nearest. These are the levels that can be the steady
// state (steps.SelectSteadyLevel picks the fewest connections within noise
// of the best). None when no level of round 1 is a steady state. The reason
// says why, in words.
func Candidates(recs []*schema.Step) ([]int, string) {
	bi := best(recs)
	if bi < 0 {
		return nil, "no level of round 1 is a steady state: later rounds repeat nothing"
	}
	b := recs[bi]
	var lower []*schema.Step
	for _, s := range recs {
		if s.Connections < b.Connections && Steady(s) && s.QPS >= b.QPS*(1-CandidateWithinPct/100) {
			lower = append(lower, s)
		}
	}
	slices.SortFunc(lower, func(x, y *schema.Step) int { return y.Connections - x.Connections })
	lower = lower[:min(len(lower), MaxLowerCandidates)]
	cs := []int{b.Connections}
	var within []string
	for _, s := range lower {
		cs = append(cs, s.Connections)
		within = append(within, fmt.Sprintf("c=%d (%s qps)", s.Connections, steps.FormatQPS(s.QPS)))
	}
	slices.Sort(cs)
	why := fmt.Sprintf("c=%d has round 1's best qps (%s)", b.Connections, steps.FormatQPS(b.QPS))
	if len(within) == 0 {
		return cs, why + "; no level with fewer connections is within " + formatNum(CandidateWithinPct) + "% of it"
	}
	slices.Reverse(within)
	return cs, why + "; within " + formatNum(CandidateWithinPct) + "% of it: " + strings.Join(within, ", ")
}

// formatNum renders a percentage with at most one decimal: "5", "12.5".
func formatNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
