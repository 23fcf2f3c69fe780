package compare

import (
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

// TestAgreeShares: the P99 at each share both sides measured is checked
// within ±10%, its interval's honesty counted; a share N/A on a side and a
// share only one side has are left out.
func TestAgreeShares(t *testing.T) {
	iv := func(c, h float64) model.Interval { return model.Interval{N: 10, Center: c, Lo: c - h, Hi: c + h} }
	sh := func(share int, p99 model.Interval, na string) model.ShareLatency {
		return model.ShareLatency{Share: share, P99: p99, NA: na}
	}
	cells := []AgreeCell{
		{Row: Row{Product: "a", Scenario: "discovery", Reported: &Reported{
			OldShares: []model.ShareLatency{sh(50, iv(10, 1), ""), sh(80, iv(20, 1), "")},
			NewShares: []model.ShareLatency{sh(50, iv(10.5, 1), ""), sh(80, iv(30, 1), "")}}}},
		{Row: Row{Product: "b", Scenario: "discovery", Reported: &Reported{
			OldShares: []model.ShareLatency{sh(50, iv(5, 0.1), ""), sh(80, iv(8, 1), "errors")},
			NewShares: []model.ShareLatency{sh(50, iv(6, 0.1), ""), sh(80, iv(8, 1), "")}}}},
		{Row: Row{Product: "c", Scenario: "discovery", Reported: &Reported{
			OldShares: []model.ShareLatency{sh(50, iv(5, 1), "")}}}},
	}
	got := agreeShares(cells)
	if len(got) != 2 || got[0].Share != 50 || got[1].Share != 80 {
		t.Fatalf("shares %+v, want 50 and 80", got)
	}
	if s := got[0]; s.Total != 2 || s.Agree != 1 || s.Paired != 2 || s.Honest != 1 || s.MedianPct != 12.5 {
		t.Errorf("at 50%%: %d of %d within, %d of %d honest, median %g; want 1 of 2 (+5%%, +20%%), 1 of 2 (0.5 within 1.4; 1 beyond 0.14), 12.5", s.Agree, s.Total, s.Honest, s.Paired, s.MedianPct)
	}
	if s := got[1]; s.Total != 1 || s.Agree != 0 || s.Honest != 0 || len(s.Cells) != 1 {
		t.Errorf("at 80%%: %+v, want one cell (b's is N/A in OLD), +50%%, not covered", s)
	}
	if s := got[1]; len(s.Skipped) != 1 || s.Skipped[0].Product != "b" || s.Skipped[0].Why != "OLD errors" {
		t.Errorf("at 80%% left out: %+v, want b with OLD's reason", s.Skipped)
	}
}

// TestShareAgreementSaysWhatIsNotCompared: a share a side did not sustain
// is not compared, and the rendering names it with the reason.
func TestShareAgreementSaysWhatIsNotCompared(t *testing.T) {
	iv := model.Interval{N: 10, Center: 10, Lo: 9, Hi: 11}
	na := "not sustained at 7,659/s (80% of capacity): its queue grew 290 ms a second"
	cells := []AgreeCell{{Row: Row{Product: "keycloak", Scenario: "discovery", Reported: &Reported{
		OldShares: []model.ShareLatency{{Share: 80, P99: iv}},
		NewShares: []model.ShareLatency{{Share: 80, NA: na, Unsustained: true}}}}}}
	var b strings.Builder
	writeShareAgreement(&b, Agreement{Shares: agreeShares(cells)})
	if want := "- keycloak discovery at 80%: NEW " + na; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "Not compared") {
		t.Errorf("agreement:\n%s\nwant a line %q", b.String(), want)
	}
}
