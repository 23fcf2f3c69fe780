package hydra

import (
	"testing"

	"github.com/idpbench/idpbench/internal/servermetrics"
)

// TestServerMetricsOnARealScrape: every selector matches series of a
// scrape of the running Hydra (testdata, as served) and reads its counts
// and buckets.
func TestServerMetricsOnARealScrape(t *testing.T) {
	fams, err := servermetrics.ParseFile("testdata/hydra-v2.3.0.prom")
	if err != nil {
		t.Fatal(err)
	}
	for scenario, sel := range Product().ServerMetrics.Scenarios {
		w, err := servermetrics.Delta(servermetrics.Families{}, fams, sel)
		if err != nil {
			t.Errorf("%s: %v", scenario, err)
		} else if w.Requests == 0 || w.Latency == nil {
			t.Errorf("%s: %+v, want requests and buckets", scenario, w)
		}
	}
}
