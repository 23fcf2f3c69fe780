package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// knees returns r's knee records in report order: by scenario (the
// report's order), then product.
func knees(r *model.Report) []model.KneeFile {
	order := map[string]int{}
	for i, s := range schema.Scenarios {
		order[s.Name] = i
	}
	ks := slices.Clone(r.Knees)
	slices.SortStableFunc(ks, func(a, b model.KneeFile) int {
		return cmp.Or(cmp.Compare(order[a.Knee.Scenario], order[b.Knee.Scenario]), strings.Compare(a.Knee.Product, b.Knee.Product))
	})
	return ks
}

// kneeAppendix renders "Ladders: where each stopped": per knee record, the
// levels round 1 measured, where and why it stopped (or that it ran the
// full ladder) and the levels later rounds repeated. Nothing for a run
// without knee records (from before the knee rule).
func (m *md) kneeAppendix() {
	ks := knees(m.r)
	if len(ks) == 0 {
		return
	}
	m.printf("## Ladders: where each stopped\n\n")
	m.printf("Round 1 of a ladder stops at its knee: when the last two levels each added less than the\n")
	m.printf("noise to the best QPS before them (a level that is not a steady state adds nothing) while\n")
	m.printf("P99 rose; never before 3 levels. Later rounds (`--repeats N`) repeat only the candidate\n")
	m.printf("steady levels: round 1's best steady level and up to 2 lower levels within 10%% of its QPS.\n\n")
	m.printf("| Product | Scenario | Levels measured | Stopped | Levels repeated | Record |\n")
	m.printf("|---|---|---|---|---|---|\n")
	for _, kf := range ks {
		k := kf.Knee
		m.printf("| %s | %s | %s | %s | %s | %s |\n", cell(k.Product), cell(scenarioText(k.Scenario)),
			levelsText(k.Measured), cell(stoppedText(k)), cell(repeatedText(k)), m.link(kf.Path))
	}
	m.printf("\n")
}

// chartKneeNote says which ladders the charts draw short: the levels a
// knee skipped have no step to draw.
func (m *md) chartKneeNote() {
	var parts []string
	for _, kf := range knees(m.r) {
		if k := kf.Knee; !k.FullLadder && len(k.Skipped) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s: %s", scenarioText(k.Scenario), k.Product, levelsText(k.Skipped)))
		}
	}
	if len(parts) > 0 {
		m.printf("Not measured, so not drawn: the levels above a ladder's knee (\"Ladders: where each stopped\"): %s.\n\n", strings.Join(parts, "; "))
	}
}

// scenarioText is "S1 discovery" (the name alone for an unknown scenario).
func scenarioText(name string) string {
	if s, ok := schema.LookupScenario(name); ok {
		return s.ID + " " + s.Name
	}
	return name
}

// levelsText is "c=2, 4, 8"; "none" for no levels.
func levelsText(cs []int) string {
	if len(cs) == 0 {
		return "none"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.Itoa(c)
	}
	return "c=" + strings.Join(s, ", ")
}

func stoppedText(k *schema.Knee) string {
	switch {
	case k.FullLadder && k.StoppedAfter > 0:
		return fmt.Sprintf("full ladder (the rule would have stopped after c=%d, skipping %s: %s)", k.StoppedAfter, levelsText(k.Skipped), k.Reason)
	case k.FullLadder:
		return fmt.Sprintf("full ladder (%s)", k.Reason)
	case k.StoppedAfter > 0:
		return fmt.Sprintf("after c=%d (%s); skipped %s", k.StoppedAfter, k.Reason, levelsText(k.Skipped))
	}
	return fmt.Sprintf("at the end of the ladder (%s)", k.Reason)
}

// repeatedText: the candidates, or why none (no later round, or none qualified).
func repeatedText(k *schema.Knee) string {
	switch {
	case len(k.Candidates) > 0:
		return levelsText(k.Candidates)
	case k.CandidatesReason != "":
		return "none: " + k.CandidatesReason
	}
	return "none (no later round)"
}
