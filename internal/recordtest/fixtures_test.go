package recordtest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// The fixtures under internal/model/testdata are committed: readers must
// keep decoding them. Regenerate them (deterministically) with
//
//	go test ./internal/recordtest -run TestFixtures -update-fixtures
var updateFixtures = flag.Bool("update-fixtures", false, "regenerate the step/meta fixtures under internal/model/testdata")

// fixtureDir is where the fixture run is committed.
const fixtureDir = "../model/testdata"

// TestFixtures proves the committed step fixtures still decode and that
// their summaries are what their histograms say.
func TestFixtures(t *testing.T) {
	if *updateFixtures {
		writeFixtures(t, fixtureDir)
	}
	for _, sp := range fixtureSpecs() {
		if sp.schemaString != "" {
			continue
		}
		t.Run(sp.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(fixtureDir, sp.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := schema.DecodeStep(f, sp.file)
			if err != nil {
				t.Fatal(err)
			}
			checkGenuine(t, s)
		})
	}
}

func checkGenuine(t *testing.T, s *schema.Step) {
	t.Helper()
	h, err := schema.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != s.Requests {
		t.Errorf("histogram count %d, requests %d", h.TotalCount(), s.Requests)
	}
	if got := schema.Summarize(h); got != s.LatencyMS {
		t.Errorf("latency_ms %+v, histogram says %+v", s.LatencyMS, got)
	}
	var sum int64
	for _, iv := range s.Intervals {
		sum += iv.Requests
	}
	if sum != s.Requests || s.OK+s.Errors.Total() != s.Requests {
		t.Errorf("intervals sum %d, ok %d + failed %d, requests %d", sum, s.OK, s.Errors.Total(), s.Requests)
	}
}
