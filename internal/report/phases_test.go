package report

import (
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/recordtest"
)

func TestRenderTimeUse(t *testing.T) {
	sessions, records := recordtest.PhaseRun()
	in := &model.Inputs{Steps: records}
	for _, ps := range sessions {
		in.Phases = append(in.Phases, model.PhaseFile{Path: "run/phases.jsonl", Phases: ps})
	}
	var b strings.Builder
	r := &model.Report{Time: model.Build(in, model.Options{}).Time}
	if err := WriteMarkdown(&b, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| Where | hydra s | keycloak s | Total s | Total min | % of wall time |",
		"| measured windows | 30 | – | 30 | 0.5 | 8.6% |",
		"| build | – | – | 32 | 0.5 | 9.2% |",
		"| **total** | 239 | 70 | 347 | 5.8 | 100.0% |",
		"Measured windows: 8.6% of the wall time (0.5 min of 5.8 min).",
		"Measured windows incl. the GC-jitter runs' windows: 25.9% (1.5 min).",
		"from [phases.jsonl](run/phases.jsonl): run-comparison.sh",
		"2 sessions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the section lacks %q:\n%s", want, out)
		}
	}
}
