package compare

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/steps"
)

// rounds is a product's windows in rounds 1..len(qps) (label repeat=k),
// its twin's with twin.
func rounds(product string, twin bool, qps ...float64) []steps.File {
	var out []steps.File
	for i, q := range qps {
		f := win(product, "discovery", 8, q, 1, 2, i)
		f.Step.Labels = map[string]string{"phase": "ladder", "repeat": strconv.Itoa(i + 1)}
		if twin {
			f.Step.Labels["phase"] = steps.PhaseTwin
		}
		out = append(out, f)
	}
	return out
}

// TestAgreePairs: the pairs both runs measured round by round, each run's
// ratio and interval: honest when the difference lies within the combined
// half-widths, reversed when one run calls A faster and the other B; the
// reference products are left out; each run's A/A pairs counted, with the
// scenarios whose interval misses 1.
func TestAgreePairs(t *testing.T) {
	// a/b about 1.25 in OLD, 0.8 in NEW: reversed, not honest. refop left out.
	old := side("OLD", rounds("a", false, 1000, 1000, 1010, 990, 1000), rounds("b", false, 800, 800, 808, 792, 800),
		rounds("refop", false, 5000, 5000, 5000, 5000, 5000), rounds("a", true, 0, 1000, 1500, 990, 1500))
	new := side("NEW", rounds("a", false, 800, 800, 808, 792, 800), rounds("b", false, 1000, 1000, 1010, 990, 1000),
		rounds("refop", false, 5000, 5000, 5000, 5000, 5000), rounds("a", true, 0, 800, 808, 792, 800))
	old.Inputs.Steps = append(old.Inputs.Steps[:15], old.Inputs.Steps[16:]...) // no twin in round 1: the twins are of the rounds
	new.Inputs.Steps = append(new.Inputs.Steps[:15], new.Inputs.Steps[16:]...)
	a := AgreePairs(old, new, []string{"refop"})
	if len(a.Pairs) != 1 || a.Pairs[0].A != "a" || a.Pairs[0].B != "b" || a.Reversed != 1 || a.Paired != 1 || a.Honest != 0 {
		t.Fatalf("pairs %+v; reversed %d, honest %d of %d: want a / b alone, reversed, not honest", a.Pairs, a.Reversed, a.Honest, a.Paired)
	}
	if a.OldAA.WithInterval != 1 || len(a.OldAA.Missed) != 0 || a.NewAA.WithInterval != 1 || len(a.NewAA.Missed) != 0 {
		t.Errorf("A/A: OLD %+v, NEW %+v; want one pair each, holding 1", a.OldAA, a.NewAA)
	}
	var b strings.Builder
	writePairAgreement(&b, a)
	if !strings.Contains(b.String(), "reversed verdicts: 1") || !strings.Contains(b.String(), "(reversed)**") {
		t.Errorf("rendering:\n%s", b.String())
	}
}
