package compare

import (
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestFootprintSideBySide: each product's cold starts on both sides with
// their change, each peak marked with what it measures (the process tree's
// RSS, or a compose side's containers, cgroup), and a product on one side
// only said so.
func TestFootprintSideBySide(t *testing.T) {
	cold := func(product, mode string, seconds float64, peakMiB int64, as string) model.ColdstartFile {
		return model.ColdstartFile{Path: product + "/coldstart-" + mode + ".json", Coldstart: &schema.Coldstart{
			Schema: schema.ColdstartV1, Product: product, Mode: mode, Start: t0, Status: schema.StatusComplete,
			SecondsToReady: seconds, PeakRSSBytes: peakMiB << 20, PeakMeasuredAs: as}}
	}
	old := side("native", windows("hydra", "discovery", 8, 1000, 2, 5, 0))
	old.Inputs.Coldstarts = []model.ColdstartFile{cold("hydra", "A", 2, 60, ""), cold("hydra", "B", 1, 50, "")}
	new := side("compose", windows("hydra", "discovery", 8, 1000, 2, 5, 0), windows("keycloak", "discovery", 8, 900, 2, 5, 0))
	new.Inputs.Coldstarts = []model.ColdstartFile{cold("hydra", "A", 5, 90, schema.PeakCgroup), cold("hydra", "B", 1.5, 40, schema.PeakCgroup)}

	fs := Footprints(old, new)
	if len(fs) != 2 || fs[0].Product != "hydra" || fs[1].Product != "keycloak" {
		t.Fatalf("footprints %+v, want hydra then keycloak", fs)
	}
	h := fs[0]
	if h.Old.ColdA.Seconds != 2 || h.New.ColdA.Seconds != 5 || h.Old.ColdA.PeakKind != "RSS" || h.New.ColdA.PeakKind != schema.PeakCgroup {
		t.Errorf("hydra A: %+v → %+v", h.Old.ColdA, h.New.ColdA)
	}
	if fs[1].Old.ColdA.NA != "not in this run" {
		t.Errorf("keycloak's OLD side: %+v, want not in this run", fs[1].Old.ColdA)
	}
	var b strings.Builder
	writeFootprints(&b, fs)
	for _, want := range []string{
		"| hydra | 2.00 → 5.00 | +150% | 60.0 (RSS) → 90.0 (cgroup) | 1.00 → 1.50 | +50% | 50.0 (RSS) → 40.0 (cgroup) |",
		"| keycloak | N/A: not in this run → N/A: no coldstart-A record | – | – |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
