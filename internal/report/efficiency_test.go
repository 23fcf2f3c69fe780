package report

import (
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

func TestEfficiencyText(t *testing.T) {
	e := model.Efficiency{PerIdP: model.Figure{Value: 200, OK: true}, PerStack: model.Figure{Value: 1000 / 7.5, OK: true}}
	if got := efficiencyText(e); got != "200 / 133" {
		t.Errorf("efficiencyText = %q, want 200 / 133", got)
	}
	e.PerStack, e.Iterations = model.Figure{NA: "no postgres samples"}, true
	if got := efficiencyText(e); got != "iter: 200 / N/A: no postgres samples" {
		t.Errorf("efficiencyText = %q", got)
	}
}
