package report

import (
	"bufio"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestColdPeakOfContainers: a compose-mode cold start's peak (the
// containers' memory) is marked "(cgroup)" and explained, never shown as a
// process tree's RSS; a native one stays unmarked.
func TestColdPeakOfContainers(t *testing.T) {
	rec := func(as string) model.ColdstartFile {
		return model.ColdstartFile{Path: "p/coldstart-A.json", Coldstart: &schema.Coldstart{Status: schema.StatusComplete,
			SecondsToReady: 7.8, PeakRSSBytes: 96 << 20, PeakMeasuredAs: as}}
	}
	for _, tc := range []struct {
		as, cell  string
		explained bool
	}{
		{schema.PeakCgroup, "| 96.0 (cgroup)", true},
		{"", "| 96.0 |", false},
	} {
		var b strings.Builder
		w := bufio.NewWriter(&b)
		m := &md{w: w, r: &model.Report{Cold: []model.ColdstartRow{{Product: "hydra",
			A: model.Coldstart{Mode: "A", File: rec(tc.as)}, B: model.Coldstart{Mode: "B", NA: "no coldstart-B record"}}}}}
		m.memoryColdJitter()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, tc.cell) || strings.Contains(out, "\"(cgroup)\": in compose mode") != tc.explained {
			t.Errorf("peak_measured_as %q: want the cell %q and the cgroup explanation %v:\n%s", tc.as, tc.cell, tc.explained, out)
		}
	}
}
