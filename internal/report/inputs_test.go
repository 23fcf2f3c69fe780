package report

import (
	"context"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/recordtest"
)

// fixtures is the committed fixture run's directory (recordtest writes
// it, internal/model's tests read it too); run1 is its first run.
const (
	fixtures = "../model/testdata"
	run1     = fixtures + "/run1"
)

// loadRun1 reads run1 as aggregate report does, with its warnings.
func loadRun1(t *testing.T) (*model.Inputs, []string) {
	t.Helper()
	var warnings []string
	in, err := model.Load(context.Background(), []string{run1}, nil, func(m string) { warnings = append(warnings, m) })
	if err != nil {
		t.Fatal(err)
	}
	return in, warnings
}

// repeatInputs are recordtest.Repeats as the model's inputs.
func repeatInputs(t *testing.T) *model.Inputs {
	records, samples := recordtest.Repeats(t)
	return &model.Inputs{Steps: records, Samples: []model.SampleFile{{Path: recordtest.RepeatsSampler, Samples: samples}}}
}
