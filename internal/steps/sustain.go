package steps

import (
	"fmt"
	"math"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
)

// The sustain rule (docs/design-methodology.md, "Sustained or not"): whether a product
// kept up with a rate-mode window's schedule. A product that serves less
// than the offered rate queues what it cannot serve, so the latency from
// each request's intended send time (the corrected latency) grows through
// the window by the share of each second it falls behind: serving 95% of
// the offer adds about 50 ms of queue every second. The rule reads the
// corrected P50 of the window's intervals:
//
//   - growth: the Theil–Sen slope of the intervals' corrected P50 against
//     their midpoints, ms per second (the median of the slopes of every
//     pair of intervals: a pause of a second or two moves few of them);
//   - end backlog: the last interval's corrected P50 above the lowest of
//     the window's, ms (how far behind the schedule the window ended).
//
// The window is not sustained when both exceed SustainMaxPct percent of
// the time (the growth of each second; the backlog of the whole window):
// the queue grew through the window and was still there at its end. A
// pause the product catches up from leaves no backlog at the end, and its
// wait is a real latency that shows in the P99; a window that ends on a
// spike without a trend has no growth. Fewer than SustainMinIntervals
// intervals with requests are not judged.
const (
	// SustainMaxPct: 1% -- a product that served 99% of the offer passes,
	// one at 98% (growth 20 ms/s) does not.
	SustainMaxPct = 1.0
	// SustainMinIntervals is the fewest intervals the rule judges.
	SustainMinIntervals = 5
	// SustainRule names the rule and its thresholds in the records.
	SustainRule = "sustain/v1: not sustained when the corrected P50 grew by more than 1% of the time (Theil-Sen, ms/s > 10) and the window ended more than 1% of its length above its lowest second"
)

// Sustain judges rate-mode window s by its intervals (their corrected
// P50): the verdict and the figures it used. Intervals without requests
// are left out; a closed-loop window is not judged.
func Sustain(s *schema.Step) schema.Sustain {
	out := schema.Sustain{Rule: SustainRule, Verdict: schema.SustainNotJudged}
	if s.RateRPS <= 0 {
		out.Why = "a closed-loop window: no schedule to keep up with"
		return out
	}
	var t, y []float64
	var first, last float64
	for _, iv := range s.Intervals {
		if iv.Requests == 0 {
			continue
		}
		if len(t) == 0 {
			first = iv.TS
		}
		last = iv.TS + iv.LengthS
		t, y = append(t, iv.TS+iv.LengthS/2), append(y, iv.CorrectedP50MS)
	}
	out.Intervals, out.WindowS = len(y), last-first
	if len(y) < SustainMinIntervals || out.WindowS <= 0 {
		out.Why = fmt.Sprintf("%d intervals with a corrected latency: the rule judges %d or more", len(y), SustainMinIntervals)
		return out
	}
	out.GrowthMSPerS = theilSen(t, y)
	lowest := y[0]
	for _, v := range y {
		lowest = min(lowest, v)
	}
	out.EndBacklogMS = y[len(y)-1] - lowest
	growthMax := SustainMaxPct / 100 * 1000 // ms per s
	backlogMax := SustainMaxPct / 100 * out.WindowS * 1000
	if out.GrowthMSPerS > growthMax && out.EndBacklogMS > backlogMax {
		out.Verdict = schema.SustainNo
		out.Why = fmt.Sprintf("the queue grew %.1f ms a second (more than %.0f) and the window ended %.0f ms above its lowest second (more than %.0f)",
			out.GrowthMSPerS, growthMax, out.EndBacklogMS, backlogMax)
		return out
	}
	out.Verdict = schema.SustainYes
	out.Why = fmt.Sprintf("growth %.1f ms a second, end backlog %.0f ms (not sustained: above %.0f and %.0f both)",
		out.GrowthMSPerS, out.EndBacklogMS, growthMax, backlogMax)
	return out
}

// theilSen is the median of the slopes of every pair of points (dy/dx,
// pairs with equal x left out): a trend that a minority of outliers
// cannot move (Sen, JASA 1968).
func theilSen(x, y []float64) float64 {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	m, ok := stats.Median(slopes)
	if !ok || math.IsNaN(m) {
		return 0
	}
	return m
}

// Sustained is the verdict a rate-mode step carries, or, for a record
// written before loadstep judged it, the rule applied to its intervals.
func Sustained(s *schema.Step) schema.Sustain {
	if s.Sustain != nil {
		return *s.Sustain
	}
	return Sustain(s)
}

// ShareNA is why a window at a share measured nothing a latency can be
// read from ("" when it can): as a ladder window qualifies (judged by the
// scenario's rule, Qualifies), and in rate mode. The report shows it in
// the latency's place; the ladder's search takes no such window as found.
func ShareNA(s *schema.Step) string {
	switch rule := schema.ScenarioCheck(s.Scenario); {
	case rule != "" && s.Check != rule:
		return fmt.Sprintf("a window judged by %q, not the scenario's rule %q", s.Check, rule)
	case s.Status != schema.StatusComplete:
		return "a window " + s.Status
	case s.Requests == 0:
		return "a window in which no request completed"
	case !BelowErrors(s):
		return fmt.Sprintf("errors %s in a window (the rule: below 0.01%%)", FormatPct(s.ErrorRate))
	case !Reachable(s):
		return "a window with failed connection attempts"
	case s.Driver.Limited:
		return "the load generator was the limit in a window (driver-limited)"
	case s.RateRPS <= 0:
		return "a window in a closed loop (a share's windows run in rate mode)"
	}
	return ""
}
