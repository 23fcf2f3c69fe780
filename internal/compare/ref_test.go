package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

// TestWelch: Welch's t test of two samples (a worked example: means 0 and
// 1, variances 1 and 1, 4 values a side: t = 1.414, df = 6, p = 0.207);
// fewer than 3 values a side: not testable.
func TestWelch(t *testing.T) {
	a := []float64{-1.2247, 0, 0, 1.2247} // mean 0, variance 1
	b := []float64{-0.2247, 1, 1, 2.2247} // mean 1, variance 1
	p, ok := welch(a, b)
	if !ok || math.Abs(p-0.2070) > 0.002 {
		t.Errorf("p %.4f (%v), want 0.207", p, ok)
	}
	if _, ok := welch(a[:2], b); ok {
		t.Error("2 values: testable")
	}
}

// TestRefGate: a cell's ratio to the reference, paired within each run,
// fails ref<-5% when it fell significantly by more than 5%, is undecided
// with too few rounds, passes within noise; the table names the reference.
func TestRefGate(t *testing.T) {
	pair := func(rs ...float64) *model.Pair {
		p := model.Pair{Ratios: rs, Interval: model.PairedInterval(rs)}
		return &p
	}
	fell := refDelta("refop", pair(0.50, 0.51, 0.49, 0.50), pair(0.40, 0.41, 0.39, 0.40), 0.05)
	same := refDelta("refop", pair(0.50, 0.55, 0.45, 0.50), pair(0.49, 0.56, 0.44, 0.51), 0.05)
	few := refDelta("refop", pair(0.50, 0.51), pair(0.40, 0.41), 0.05)
	g, err := ParseGate("ref<-5%")
	if err != nil {
		t.Fatal(err)
	}
	v := g.Check([]Row{{Product: "a", Scenario: "discovery", Status: StatusCompared, Ref: fell},
		{Product: "b", Scenario: "discovery", Status: StatusCompared, Ref: same},
		{Product: "c", Scenario: "discovery", Status: StatusCompared, Ref: few}})
	if len(v.Failed) != 1 || v.Failed[0].Row.Product != "a" || !strings.Contains(v.Failed[0].Why, "ratio to refop -20") {
		t.Errorf("failed %+v, want a alone (-20%%)", v.Failed)
	}
	if len(v.Undecided) != 1 || v.Undecided[0].Row.Product != "c" {
		t.Errorf("undecided %+v, want c (2 rounds a side)", v.Undecided)
	}
	var b strings.Builder
	writeRefTable(&b, []Row{{Product: "a", Scenario: "discovery", Ref: fell}})
	if !strings.Contains(b.String(), "reference product's (refop)") || !strings.Contains(b.String(), "| a | discovery | 0.50×") {
		t.Errorf("table:\n%s", b.String())
	}
}
