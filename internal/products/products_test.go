package products

import (
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
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
		in := Inputs{Version: "1.0", Params: map[string]string{}}
		if p.TakesConfig { // the generic adapter's sources are its configuration's
			in.Config.Sources = []schema.Link{{What: "docs", URL: "https://example.com"}}
		}
		for _, prm := range p.Params {
			in.Params[prm.Name] = "P-" + prm.Name
		}
		for _, mode := range []string{ModeNative, ModeCompose} {
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

// TestKeycloakInputs: the values the adapter applied are in the settings
// and deviations; compose mode drops the two deviations only native mode
// makes and replaces the JDK and heap.
func TestKeycloakInputs(t *testing.T) {
	in := Inputs{Version: "26.7.3", Mode: ModeNative, Params: map[string]string{"jdk": "OpenJDK 21", "heap": "-Xmx1400m",
		"build": "--db=postgres", "base_url": "http://127.0.0.1:8080", "users": "20"}}
	kc := Keycloak()
	native := kc.Part(in)
	if native.Settings["heap"] != "JAVA_OPTS_KC_HEAP=-Xmx1400m" || native.Settings["jdk"] != "OpenJDK 21" || native.Settings["version"] != "26.7.3" ||
		native.Settings["users"] != "20 (user0..; one shared password)" || len(native.Deviations) != 7 {
		t.Errorf("native: %v, %d deviations", native.Settings, len(native.Deviations))
	}
	in.Mode = ModeCompose
	c := kc.Part(in)
	if len(c.Deviations) != 5 || strings.Contains(c.Settings["jdk"], "OpenJDK 21") || !strings.HasPrefix(c.Settings["heap"], "container default") {
		t.Errorf("compose: %v, deviations %+v", c.Settings, c.Deviations)
	}
	for _, d := range c.Deviations {
		if strings.HasPrefix(d.What, "JAVA_OPTS_KC_HEAP") || strings.HasPrefix(d.What, "--cache-embedded") {
			t.Errorf("compose keeps %q", d.What)
		}
	}
	delete(in.Params, "heap")
	if err := kc.Check(in); err == nil || !strings.Contains(err.Error(), "--param heap=VALUE") {
		t.Errorf("Check without heap: %v", err)
	}
	in.Params["heap"], in.Params["extra"] = "x", "y"
	if err := kc.Check(in); err == nil || !strings.Contains(err.Error(), "no --param extra") {
		t.Errorf("Check with extra: %v", err)
	}
}

func TestAdapterMetaAndRun(t *testing.T) {
	a := Adapter{Product: Hydra(), Inputs: Inputs{Version: "v2.3.0", Mode: ModeCompose},
		Compose:    &Compose{File: "deploy/compose/compose.hydra.yml", MemoryLimit: "every service 2G"},
		ScenarioNA: map[string]string{"refresh": "no"}, Endpoints: map[string]string{"discovery": "http://d"}}
	m, err := AdapterMeta(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "ok" || m.Settings["mode"] != "compose" || m.Settings["memory_limit"] != "every service 2G" ||
		!strings.HasPrefix(m.Settings["config"], "serve all --dev, configured through the environment") ||
		len(m.ScenarioNA) != 3 || m.ScenarioNA["refresh"] != "no" || !strings.HasPrefix(m.Notes[len(m.Notes)-3], "Compose mode (deploy/compose/compose.hydra.yml)") {
		t.Errorf("%+v", m)
	}
	a.Endpoints["jwt_bearer"] = "http://j"
	if _, err := AdapterMeta(a); err == nil {
		t.Error("an endpoint of an N/A scenario was accepted")
	}
	end := time.Date(2026, 12, 2, 13, 6, 24, 0, time.UTC)
	r := Run{Status: "ok", End: end, Profile: "quick", Unrun: []string{"refresh", "userinfo"}, Placement: schema.Placement{Mode: "shared"}}
	r.Apply(&m)
	if m.ScenarioNA["refresh"] != "no" || m.ScenarioNA["userinfo"] != UnrunReason || !m.Start.IsZero() || m.End != end ||
		m.Notes[len(m.Notes)-1] != "profile: quick" || m.Placement.Mode != "shared" {
		t.Errorf("after Run.Apply: %+v", m)
	}
}
