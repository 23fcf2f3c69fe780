package report

import (
	"fmt"

	"github.com/idpbench/idpbench/internal/schema"
)

// SelectSteady picks a ladder's steady-state step (DESIGN.md): among the
// complete steps judged by rule (schema.Step.Check; "" = any rule) with
// error_rate below schema.SteadyMaxErrorRate that were not driver-limited,
// the one with the highest qps (the fewer connections on a tie, as steps
// come in ladder order). It returns the index into steps, or -1 and why no
// step qualifies.
func SelectSteady(steps []*schema.Step, rule string) (int, string) {
	best := -1
	for i, s := range steps {
		if judgedBy(s, rule) && Qualifies(s) && (best < 0 || s.QPS > steps[best].QPS) {
			best = i
		}
	}
	if best >= 0 {
		return best, ""
	}
	var judged []*schema.Step
	for _, s := range steps {
		if judgedBy(s, rule) {
			judged = append(judged, s)
		}
	}
	if len(steps) > 0 && len(judged) == 0 {
		return -1, otherRuleReason(steps[0], rule)
	}
	return -1, noSteadyReason(judged)
}

// judgedBy reports whether s was judged by rule ("" = any rule).
func judgedBy(s *schema.Step, rule string) bool {
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

// Qualifies reports whether a step may be a steady state: complete, below
// schema.SteadyMaxErrorRate errors, every connection attempt answered, and
// not driver-limited (SelectSteady's rule, without the success rule).
func Qualifies(s *schema.Step) bool {
	return s.Status == schema.StatusComplete && belowErrors(s) && reachable(s) && !s.Driver.Limited
}

// reachable: no connection attempt of the window failed. A step whose
// target refused connections for a while measured part of a window only.
func reachable(s *schema.Step) bool {
	return s.ConnectErrors.Total() == 0
}

func belowErrors(s *schema.Step) bool {
	return s.ErrorRate < schema.SteadyMaxErrorRate
}

// noSteadyReason explains why no step of a ladder qualifies.
func noSteadyReason(steps []*schema.Step) string {
	var complete, below, reached []*schema.Step
	for _, s := range steps {
		if s.Status != schema.StatusComplete {
			continue
		}
		complete = append(complete, s)
		if belowErrors(s) {
			below = append(below, s)
			if reachable(s) {
				reached = append(reached, s)
			}
		}
	}
	switch {
	case len(steps) == 0:
		return "no results"
	case len(complete) == 0:
		return "no complete step (" + statusCounts(steps) + ")"
	case len(below) == 0:
		b := leastErrors(complete)
		return fmt.Sprintf("no step below %s errors (best: c=%d, %s errors)",
			formatPct(schema.SteadyMaxErrorRate), b.Connections, formatPct(b.ErrorRate))
	case len(reached) == 0:
		return fmt.Sprintf("every step below %s errors had failed connection attempts (the target was unreachable for part of the window)",
			formatPct(schema.SteadyMaxErrorRate))
	}
	// Every complete step below the error threshold the target answered
	// throughout was driver-limited.
	below = reached
	h := highestQPS(below)
	what := "every step below " + formatPct(schema.SteadyMaxErrorRate) + " errors is driver-limited"
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
