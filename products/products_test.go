package products

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products/hydra"
)

func TestAdapterMetaAndRun(t *testing.T) {
	a := product.Adapter{Product: hydra.Product(), Inputs: product.Inputs{Version: "v2.3.0", Mode: product.ModeCompose},
		Compose:    &product.Compose{File: "products/hydra/compose.yml", MemoryLimit: "every service 2G"},
		ScenarioNA: map[string]string{"refresh": "no"}, Endpoints: map[string]string{"discovery": "http://d"}}
	m, err := product.AdapterMeta(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "ok" || m.Settings["mode"] != "compose" || m.Settings["memory_limit"] != "every service 2G" ||
		!strings.HasPrefix(m.Settings["config"], "serve all --dev, configured through the environment") ||
		len(m.ScenarioNA) != 3 || m.ScenarioNA["refresh"] != "no" || !strings.HasPrefix(m.Notes[len(m.Notes)-2], "Compose mode (products/hydra/compose.yml)") {
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

// TestFreshIsTheAdapters: an entry says Fresh exactly when its adapter (or
// the one it builds on) defines product_fresh, so that the ladder asks the
// fresh entry point of those products only.
func TestFreshIsTheAdapters(t *testing.T) {
	for _, p := range All() {
		b, err := os.ReadFile(filepath.Join(p.Name, "adapter"))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if m := regexp.MustCompile(`source "\$IDPBENCH_ROOT/products/(\w+)/adapter"`).FindStringSubmatch(src); m != nil {
			base, err := os.ReadFile(filepath.Join(m[1], "adapter"))
			if err != nil {
				t.Fatal(err)
			}
			src += string(base)
		}
		if defines := strings.Contains(src, "\nproduct_fresh() {"); defines != p.Fresh {
			t.Errorf("%s: Fresh %v, its adapter defines product_fresh: %v", p.Name, p.Fresh, defines)
		}
	}
}
