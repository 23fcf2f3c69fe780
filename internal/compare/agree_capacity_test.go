package compare

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

func TestCapacityAgreementAdd(t *testing.T) {
	var ca CapacityAgreement
	// Δ +4% within ±5%; half-widths 3 and 4: 5 covers the 4 apart.
	pct, honest := ca.add(model.Interval{N: 6, Center: 100, Lo: 97, Hi: 103}, model.Interval{N: 6, Center: 104, Lo: 100, Hi: 108}, 5)
	if math.Abs(pct-4) > 1e-9 || !honest {
		t.Errorf("add = %g %v, want +4%% and covered", pct, honest)
	}
	// Δ -10%: outside ±5%, and half-widths 2 and 2 (√8 ≈ 2.8) do not cover 10.
	if _, honest := ca.add(model.Interval{N: 6, Center: 100, Lo: 98, Hi: 102}, model.Interval{N: 6, Center: 90, Lo: 88, Hi: 92}, 5); honest {
		t.Error("a difference of 10 beyond half-widths of 2 counted as covered")
	}
	// No interval on one side: counted for Δ, not for honesty.
	if _, honest := ca.add(model.Interval{N: 3, Center: 100, NA: "3 windows"}, model.Interval{N: 6, Center: 101, Lo: 90, Hi: 110}, 5); honest {
		t.Error("a side without an interval counted as covered")
	}
	want := CapacityAgreement{Agree: 2, Total: 3, Narrow: 4, Intervals: 6, Honest: 1, Paired: 2}
	if ca != want {
		t.Errorf("agreement %+v, want %+v", ca, want)
	}
}

// TestGateCapacity: a capacity rule judges the capacities even where the
// steady levels differ (the row is not compared), fails a significant drop
// and leaves an untestable one undecided.
func TestGateCapacity(t *testing.T) {
	g, err := ParseGate("capacity<-5%")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(old, new []float64) Row {
		rep := &Reported{OldCap: &model.Capacity{QPS: old}, NewCap: &model.Capacity{QPS: new}}
		return Row{Product: "p", Scenario: "discovery", Status: StatusNotComparable, Reported: rep, Capacity: capacityDelta(rep, nil, DefaultAlpha)}
	}
	drop := mk([]float64{100, 101, 99, 100, 102, 98}, []float64{80, 81, 79, 80, 82, 78})
	few := mk([]float64{100, 101, 99}, []float64{80, 81, 79})
	same := mk([]float64{100, 101, 99, 100, 102, 98}, []float64{100, 99, 101, 100, 98, 102})
	v := g.Check([]Row{drop, few, same})
	if len(v.Failed) != 1 || v.Failed[0].Row.Capacity != drop.Capacity || len(v.Undecided) != 1 || v.Undecided[0].Row.Capacity != few.Capacity {
		t.Fatalf("verdict %+v, want the drop failed and the 3+3 windows undecided", v)
	}
	if want := "capacity -20% (p="; !strings.HasPrefix(v.Failed[0].Why, want) || !strings.Contains(v.Failed[0].Why, "raw") {
		t.Errorf("why %q, want it to start %q and name the basis", v.Failed[0].Why, want)
	}
	if _, err := ParseGate("capacity>+5%,cap<-1%"); err == nil || !strings.Contains(err.Error(), "capacity") {
		t.Errorf("an unknown metric: %v, want an error listing capacity", err)
	}
}

// TestMarkdownCapacityColumns: with a capacity in any row, the main table
// has the capacities OLD → NEW and their difference (tested on the pooled
// windows); a row without both capacities shows dashes; without any, the
// columns are not there.
func TestMarkdownCapacityColumns(t *testing.T) {
	old, new := []float64{100, 101, 99, 100, 102, 98}, []float64{80, 81, 79, 80, 82, 78}
	cd := &CapacityDelta{Old: summarise(slices.Clone(old)), New: summarise(slices.Clone(new)), Basis: "raw"}
	cd.Delta = test(cd.Old, cd.New, 0.05)
	rows := []Row{
		{Product: "hydra", Scenario: "discovery", Connections: 8, Status: StatusCompared, Old: &Figures{}, New: &Figures{}, Capacity: cd},
		{Product: "refop", Scenario: "discovery", Connections: 8, Status: StatusOldOnly, Old: &Figures{}},
	}
	var md strings.Builder
	if err := Write(&md, Result{Alpha: 0.05, Rows: rows}, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| product | scenario | level | capacity OLD → NEW | Δ capacity | qps OLD → NEW |",
		"| hydra | discovery | c=8 | 100 ±2.0% → 80.0 ±2.5% (raw) | **-20%** (p=0.002) |",
		"| refop | discovery | c=8 | — | — |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no %q in:\n%s", want, md.String())
		}
	}
	md.Reset()
	rows[0].Capacity = nil
	if err := Write(&md, Result{Alpha: 0.05, Rows: rows}, FormatMarkdown); err != nil || strings.Contains(md.String(), "capacity OLD") {
		t.Errorf("no row has a capacity, yet (%v):\n%s", err, md.String())
	}
}
