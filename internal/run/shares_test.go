package run

import (
	"context"
	"testing"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestShareTargets: every steady cell of the product gets its windows at
// shares at its headline capacity on twice the plateau's most connections;
// another product's cells and the scenarios without records get none.
func TestShareTargets(t *testing.T) {
	runDir := t.TempDir()
	writeWindows(t, runDir, "p", schema.ScenarioDiscovery, 8, 1000, 1010, 990)
	writeWindows(t, runDir, "other", schema.ScenarioIntrospect, 4, 500, 510)
	in, err := model.Load(context.Background(), []string{runDir}, nil, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	got := ShareTargets(model.Build(in, model.Options{}), "p", []string{schema.ScenarioDiscovery, schema.ScenarioIntrospect, schema.ScenarioUserinfo})
	if len(got) != 1 || got[0].Scenario != schema.ScenarioDiscovery || got[0].CapacityQPS != 1000 || got[0].Connections != 16 {
		t.Errorf("targets %+v, want discovery at 1000/s on c=16", got)
	}
}

// TestShareConnections: twice the plateau's most, or enough for twice the
// capacity in flight at its P99, at most 512.
func TestShareConnections(t *testing.T) {
	for _, c := range []struct {
		most     int
		qps, p99 float64
		want     int
	}{
		{8, 1000, 1, 16},     // 2 in flight: the plateau's 16
		{2, 1024, 9.3, 20},   // 2 x 1024 x 9.3 ms = 19.05
		{32, 20000, 50, 512}, // 2000: capped
	} {
		if got := ShareConnections(c.most, c.qps, c.p99); got != c.want {
			t.Errorf("ShareConnections(%d, %g, %g) = %d, want %d", c.most, c.qps, c.p99, got, c.want)
		}
	}
}

// TestCloseReserve: closing an open product reserves its windows at
// shares for every cell with a steady state so far, besides its GC-jitter
// window and 40 s (a product without records yet, every scenario); a
// closed product or one that did not run reserves nothing.
func TestCloseReserve(t *testing.T) {
	runDir := t.TempDir()
	writeWindows(t, runDir, "p", schema.ScenarioDiscovery, 8, 1000, 1010, 990)
	writeWindows(t, runDir, "p", schema.ScenarioUserinfo, 8, 1000, 1300, 800)
	r := &runner{runDir: runDir, env: Env{Getenv: func(k string) string { return map[string]string{"IDPBENCH_GCJITTER_S": "60"}[k] }},
		closed: map[string]bool{"done": true}, out: map[string]bool{"na": true}}
	r.Products = []string{"p", "q", "done", "na"} // q: no records yet, so all 3 scenarios
	r.Scenarios = []string{schema.ScenarioDiscovery, schema.ScenarioUserinfo, schema.ScenarioRefresh}
	r.Shares = ladder.ShareSettings{Shares: []int{50, 80}, ShareWindows: 1, ShareDurationS: 10, ShareWarmupS: 2}
	if got, want := r.closeReserveS(context.Background()), float64(60+40+2*2*(2+10+2))+float64(60+40+3*2*(2+10+2)); got != want {
		t.Errorf("closeReserveS = %g, want %g (p: 2 steady cells; q: every scenario)", got, want)
	}
}
