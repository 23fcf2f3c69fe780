package products

import (
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products/hydra"
)

// TestEntries: every product's N/A scenarios are scenarios, its part
// builds from its params in both modes with every deviation and config
// source complete, and it states no empty setting it was not given.
func TestEntries(t *testing.T) {
	for _, p := range All() {
		for s, why := range p.NA {
			if _, ok := schema.LookupScenario(s); !ok || s == schema.ScenarioRequest || why == "" {
				t.Errorf("%s: N/A %q (%q): not a benchmark scenario, or no reason", p.Name, s, why)
			}
		}
		in := product.Inputs{Version: "1.0", Params: map[string]string{}}
		if p.TakesConfig { // the generic adapter's sources are its configuration's
			in.Config.Sources = []schema.Link{{What: "docs", URL: "https://example.com"}}
		}
		for _, prm := range p.Params {
			in.Params[prm.Name] = "P-" + prm.Name
		}
		for _, mode := range []string{product.ModeNative, product.ModeCompose} {
			in.Mode = mode
			if err := p.Check(in); err != nil {
				t.Fatalf("%s %s: %v", p.Name, mode, err)
			}
			m := p.Part(in)
			if len(m.Settings) == 0 || len(m.ConfigSources) == 0 || len(m.Deviations) == 0 || len(m.Notes) == 0 {
				t.Errorf("%s %s: an empty part: %+v", p.Name, mode, m)
			}
			for _, d := range m.Deviations {
				if d.What == "" || d.Why == "" {
					t.Errorf("%s %s: deviation without what or why: %+v", p.Name, mode, d)
				}
			}
			for _, l := range m.ConfigSources {
				if l.What == "" || !strings.HasPrefix(l.URL, "https://") {
					t.Errorf("%s %s: config source %+v", p.Name, mode, l)
				}
			}
			for k, v := range m.Settings {
				if v == "" {
					t.Errorf("%s %s: setting %s is empty", p.Name, mode, k)
				}
			}
		}
	}
}

func TestAdapterMetaAndRun(t *testing.T) {
	a := product.Adapter{Product: hydra.Product(), Inputs: product.Inputs{Version: "v2.3.0", Mode: product.ModeCompose},
		Compose:    &product.Compose{File: "deploy/compose/compose.hydra.yml", MemoryLimit: "every service 2G"},
		ScenarioNA: map[string]string{"refresh": "no"}, Endpoints: map[string]string{"discovery": "http://d"}}
	m, err := product.AdapterMeta(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "ok" || m.Settings["mode"] != "compose" || m.Settings["memory_limit"] != "every service 2G" ||
		!strings.HasPrefix(m.Settings["config"], "serve all --dev, configured through the environment") ||
		len(m.ScenarioNA) != 3 || m.ScenarioNA["refresh"] != "no" || !strings.HasPrefix(m.Notes[len(m.Notes)-3], "Compose mode (deploy/compose/compose.hydra.yml)") {
		t.Errorf("%+v", m)
	}
	a.Endpoints["jwt_bearer"] = "http://j"
	if _, err := product.AdapterMeta(a); err == nil {
		t.Error("an endpoint of an N/A scenario was accepted")
	}
	end := time.Date(2026, 12, 2, 13, 6, 24, 0, time.UTC)
	r := product.Run{Status: "ok", End: end, Profile: "quick", Unrun: []string{"refresh", "userinfo"}, Placement: schema.Placement{Mode: "shared"}}
	r.Apply(&m)
	if m.ScenarioNA["refresh"] != "no" || m.ScenarioNA["userinfo"] != product.UnrunReason || !m.Start.IsZero() || m.End != end ||
		m.Notes[len(m.Notes)-1] != "profile: quick" || m.Placement.Mode != "shared" {
		t.Errorf("after Run.Apply: %+v", m)
	}
}
