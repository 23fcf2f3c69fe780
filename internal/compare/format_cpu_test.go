package compare

import (
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// TestDescribeCPUs: each side names its processors; sides on different
// processors are said to be so, the same or unrecorded ones are not.
func TestDescribeCPUs(t *testing.T) {
	side := func(cpus ...string) Side {
		var in model.Inputs
		for _, c := range cpus {
			in.Steps = append(in.Steps, steps.File{Step: &schema.Step{Host: schema.Host{CPU: c}}})
		}
		return Side{Name: "x", Inputs: &in}
	}
	zen5 := "AMD EPYC (AuthenticAMD family 26 model 2 stepping 1)"
	zen2 := "AMD EPYC (AuthenticAMD family 23 model 49 stepping 0)"
	a, b := Describe(side(zen5, zen5, "")), Describe(side(zen2))
	if len(a.CPUs) != 1 || !strings.Contains(a.String(), ", on "+zen5) {
		t.Errorf("side %+v: %s", a, a)
	}
	if got := otherCPUs(a, b); !strings.Contains(got, "different processors") || !strings.Contains(got, zen2) {
		t.Errorf("otherCPUs(zen5, zen2) = %q", got)
	}
	for _, pair := range [][2]SideInfo{{a, a}, {a, Describe(side(""))}} {
		if got := otherCPUs(pair[0], pair[1]); got != "" {
			t.Errorf("otherCPUs(%v, %v) = %q, want nothing", pair[0].CPUs, pair[1].CPUs, got)
		}
	}
}
