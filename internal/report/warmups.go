package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// warmups states, per product, the warmup rule its ladder steps ran by and
// what each scenario's steps spent: every product is warmed by one rule
// (docs/design-methodology.md, Warmup; scripts/ladder.sh runs it), so the spent
// warmups are where they differ.
func (m *md) warmups(product string) {
	var rules []string
	var rows []string
	for _, c := range m.r.Cells {
		if c.Product != product || len(c.Ladder) == 0 {
			continue
		}
		capped, adaptive := 0, 0
		for _, ls := range c.Ladder {
			s := ls.Step
			if r := warmupRuleText(s); !slices.Contains(rules, r) {
				rules = append(rules, r)
			}
			if s.WarmupRule != nil {
				adaptive++
				if s.WarmupStable != nil && !*s.WarmupStable {
					capped++
				}
			}
		}
		rows = append(rows, warmupSpentText(c.Scenario, c.Warmup, adaptive, capped)+jitText(c.JIT)+steadyJITText(c))
	}
	if len(rows) == 0 {
		return
	}
	m.printf("- Warmup rule: %s\n", strings.Join(rules, "; "))
	m.list("Warmup spent per ladder step", len(rows), func(i int) string { return rows[i] })
}

// warmupRuleText describes the warmup a step ran by.
func warmupRuleText(s *schema.Step) string {
	r := s.WarmupRule
	if r == nil {
		return fmt.Sprintf("fixed, %s before every step", steps.FormatSeconds(s.WarmupS))
	}
	jit := ""
	if r.JITMaxPct > 0 {
		jit = fmt.Sprintf(" and, where the product has a JIT (a JVM), its compiler threads were busy at most %g%% of one core in each", r.JITMaxPct)
	}
	return fmt.Sprintf("at least %s, then until the throughput of the last %d intervals of %s is each within ±%g%% of their mean%s, at most %s",
		steps.FormatSeconds(r.MinS), r.StableIntervals, steps.FormatSeconds(s.IntervalS), r.TolerancePct, jit, steps.FormatSeconds(r.MaxS))
}

// steadyJITText names the steady level's windows that were measured while
// the JIT compiled more than the rule allows in a warmup (a warmup that
// ended at its cap, or a JIT that woke again in the window): "; 2 of the 3
// steady windows (c=8) were measured while the JIT compiled more than 20%
// of a core (35%, 28%)". "" when none was, or nothing was read.
func steadyJITText(c model.Cell) string {
	if c.SteadyLevel < 0 || c.SteadyLevel >= len(c.Levels) {
		return ""
	}
	lv := &c.Levels[c.SteadyLevel]
	var busy []string
	limit := 0.0
	for _, i := range lv.Steps {
		s := c.Ladder[i].Step
		if s.JIT == nil || s.JIT.WindowPct == nil || s.WarmupRule == nil || s.WarmupRule.JITMaxPct <= 0 {
			continue
		}
		if *s.JIT.WindowPct > s.WarmupRule.JITMaxPct {
			busy, limit = append(busy, fmt.Sprintf("%g%%", *s.JIT.WindowPct)), s.WarmupRule.JITMaxPct
		}
	}
	if len(busy) == 0 {
		return ""
	}
	verb := "were"
	if len(busy) == 1 {
		verb = "was"
	}
	return fmt.Sprintf("; %d of the %d steady windows (c=%d) %s measured while the JIT compiled more than %g%% of a core (%s)",
		len(busy), len(lv.Steps), lv.Connections, verb, limit, strings.Join(busy, ", "))
}

// jitText: "; the JIT compiled 2–35% of a core in the windows, median 6%",
// from the steps' jit.window_pct (Cell.JIT); "" when no JIT was read
// (none, or not watched).
func jitText(pct steps.Spread) string {
	if pct.N == 0 {
		return ""
	}
	if pct.Min == pct.Max {
		return fmt.Sprintf("; the JIT compiled %g%% of a core in the windows", pct.Min)
	}
	return fmt.Sprintf("; the JIT compiled %g–%g%% of a core in the windows, median %g%%", pct.Min, pct.Max, math.Round(pct.Median*10)/10)
}

// warmupSpentText: "S2 client_credentials: 3.1 s–41.2 s, median 4 s over 9
// steps; 1 of 9 ended at the cap (not stable)", or "5 s each, 4 steps".
func warmupSpentText(sc schema.ScenarioInfo, spent steps.Spread, adaptive, capped int) string {
	lo, hi := steps.Secs(spent.Min), steps.Secs(spent.Max)
	out := fmt.Sprintf("%s %s: %s each, %s", sc.ID, sc.Name, lo, steps.Plural(spent.N, "step"))
	if lo != hi {
		out = fmt.Sprintf("%s %s: %s–%s, median %s over %s", sc.ID, sc.Name, lo, hi, steps.Secs(spent.Median), steps.Plural(spent.N, "step"))
	}
	switch {
	case adaptive == 0:
	case capped == 0:
		out += "; every one ended stable"
	default:
		out += fmt.Sprintf("; %d of %d ended at the cap (not stable)", capped, adaptive)
	}
	return out
}
