package report

import (
	"fmt"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// verdictSection renders the first screen: the chart and a row per
// scenario, the products of the comparison fastest first, each other one
// with its paired ratio to the fastest and its interval, "within noise"
// where that holds 1; the reference apart. Nothing for a run without
// interleaved rounds (no pair).
func (m *md) verdictSection() {
	r := m.r
	if len(r.Pairs) == 0 {
		return
	}
	m.printf("**Who is faster, by how much, how sure.** Each row ranks the products of one scenario by\n")
	m.printf("capacity; each after the first is a share of the fastest, measured round by round: in each of\n")
	m.printf("%s every product ran one window at its level, the products of a scenario seconds\n", steps.Plural(r.InterleavedRounds(), "interleaved round"))
	m.printf("apart, and the ratio is the geometric mean of their windows' ratios with a 95%% t interval over\n")
	m.printf("the rounds. *within noise*: the interval holds 1, no verdict. The reference OP (%s) is this\n", orUnknown(strings.Join(r.MeasuredReferences(), ", ")))
	m.printf("machine's protocol ceiling, not a contestant. Capacities, A/A checks and every other figure follow.\n\n")
	if m.opt.ChartsDir != "" {
		m.printf("![%s](%s)\n\n", "Capacity by scenario: bars with their intervals, a log axis per panel", m.chartLink(model.VerdictChart))
	}
	m.printf("| Scenario | Fastest, capacity/s [95%%] | The others: × of the fastest [95%%] | Reference OP, × of the fastest |\n|---|---|---|---|\n")
	for _, v := range r.Verdicts {
		first, others, ref := "–", []string{}, []string{}
		if len(v.Ranked) > 0 {
			x := v.Ranked[0]
			first = x.Product + " " + model.FormatInterval(x.Capacity, steps.FormatQPS, "")
		}
		for _, x := range v.Ranked[min(1, len(v.Ranked)):] {
			others = append(others, x.Product+" "+ratioText(x))
		}
		for _, x := range v.NA {
			others = append(others, x+" N/A")
		}
		for _, x := range v.Reference {
			s := fmt.Sprintf("%s %s/s", x.Product, steps.FormatQPS(x.Capacity.Center))
			if len(v.Ranked) > 0 {
				s += ", " + ratioText(x)
			}
			ref = append(ref, s)
		}
		m.printf("| %s %s | %s | %s | %s |\n", v.Scenario.ID, v.Scenario.Name, cell(first), cell(strings.Join(others, "; ")), cell(strings.Join(ref, "; ")))
	}
	m.printf("\n")
}

// ratioText is a ranked product's ratio to the fastest with its interval
// and verdict: "0.68× [0.61, 0.75]", "0.97× [0.90, 1.05] within noise",
// "0.9× (2 rounds, no 95% interval: needs 3)".
func ratioText(x model.Ranked) string {
	if !x.HasPair || x.ToFastest.N == 0 {
		return "(no round measured both)"
	}
	s := model.FormatInterval(x.ToFastest.Interval, model.FormatRatio, "")
	if x.ToFastest.Verdict() == model.PairNoise {
		s += " within noise"
	}
	return s
}
