package compare

import (
	"math"
	"testing"

	"github.com/idpbench/idpbench/internal/report"
)

func TestCapacityAgreementAdd(t *testing.T) {
	var ca CapacityAgreement
	// Δ +4% within ±5%; half-widths 3 and 4: 5 covers the 4 apart.
	pct, honest := ca.add(report.Interval{N: 6, Center: 100, Lo: 97, Hi: 103}, report.Interval{N: 6, Center: 104, Lo: 100, Hi: 108}, 5)
	if math.Abs(pct-4) > 1e-9 || !honest {
		t.Errorf("add = %g %v, want +4%% and covered", pct, honest)
	}
	// Δ -10%: outside ±5%, and half-widths 2 and 2 (√8 ≈ 2.8) do not cover 10.
	if _, honest := ca.add(report.Interval{N: 6, Center: 100, Lo: 98, Hi: 102}, report.Interval{N: 6, Center: 90, Lo: 88, Hi: 92}, 5); honest {
		t.Error("a difference of 10 beyond half-widths of 2 counted as covered")
	}
	// No interval on one side: counted for Δ, not for honesty.
	if _, honest := ca.add(report.Interval{N: 3, Center: 100, NA: "3 windows"}, report.Interval{N: 6, Center: 101, Lo: 90, Hi: 110}, 5); honest {
		t.Error("a side without an interval counted as covered")
	}
	want := CapacityAgreement{Agree: 2, Total: 3, Narrow: 4, Intervals: 6, Honest: 1, Paired: 2}
	if ca != want {
		t.Errorf("agreement %+v, want %+v", ca, want)
	}
}
