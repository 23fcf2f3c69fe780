package runtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestExampleProduct proves docs/products.md's "Adding a product": the example
// product (products/example, the reference OP again under another name,
// with its line in products/products.go and nothing anywhere else) is
// measured by the run like any product. A quick run of it alone,
// discovery and client_credentials at c=2, 2 s windows: both cells have
// numbers and no errors under its own name; its meta is its entry's, with
// the version read back from the running binary; the adapter's down left
// nothing (the run's exit 0 says so).
//
// About 30 s. Needs jq, PostgreSQL (installed when missing) and the
// reference OP (built on first use).
func TestExampleProduct(t *testing.T) {
	h := newHarness(t, "example", "jq")
	results := filepath.Join(h.work, "results")
	run := filepath.Join(results, "example")
	runLog := filepath.Join(h.work, "run.log")
	code, _ := h.run(h.with("IDPBENCH_TMP="+h.work, "IDPBENCH_RESULTS="+results, "IDPBENCH_SCENARIOS=discovery client_credentials",
		"IDPBENCH_LADDER=2", "IDPBENCH_WARMUP_S=1", "IDPBENCH_DURATION_S=2", "IDPBENCH_GCJITTER_S=2", "IDPBENCH_SHARES=none"),
		runLog, h.script("run-comparison.sh"), "--quick", "--repeats", "1", "--only", "example", "--run-id", "example")
	if code != 0 {
		t.Fatalf("run-comparison.sh --only example failed (exit %d); its errors and N/A reasons: %s", code, runErrors(t, runLog, run))
	}
	steadyRows(h, run, "example", "S1", "S2")
	m := readMeta(t, filepath.Join(run, "example", "meta.json"))
	if m.Product != "example" || m.Status != "ok" || m.ProductVersion != "v3.52.0" {
		t.Errorf("meta.json: product %q, status %q (%s), version %q; want example, ok, v3.52.0", m.Product, m.Status, m.NAReason, m.ProductVersion)
	}
	var version *schema.Fact
	for i, f := range m.Facts {
		if f.Name == "version" {
			version = &m.Facts[i]
		}
	}
	if version == nil || version.Source != schema.FactRead || !strings.HasSuffix(version.Value, " v3.52.0") {
		t.Errorf("meta.json: the version fact %+v, want v3.52.0 read from the running binary", version)
	}
}
