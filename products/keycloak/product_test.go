package keycloak

import (
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/product"
)

// TestKeycloakInputs: the values the adapter applied are in the settings
// and deviations; compose mode drops the two deviations only native mode
// makes and replaces the JDK and heap.
func TestKeycloakInputs(t *testing.T) {
	in := product.Inputs{Version: "26.7.3", Mode: product.ModeNative, Params: map[string]string{"jdk": "OpenJDK 21", "heap": "-Xmx1400m",
		"build": "--db=postgres", "base_url": "http://127.0.0.1:8080", "users": "20"}}
	kc := Product()
	native := kc.Part(in)
	if native.Settings["heap"] != "JAVA_OPTS_KC_HEAP=-Xmx1400m" || native.Settings["jdk"] != "OpenJDK 21" || native.Settings["version"] != "26.7.3" ||
		native.Settings["users"] != "20 (user0..; one shared password)" || len(native.Deviations) != 7 {
		t.Errorf("native: %v, %d deviations", native.Settings, len(native.Deviations))
	}
	in.Mode = product.ModeCompose
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
