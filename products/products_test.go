package products

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestMetaArgsGiveEveryParam: an entry's meta arguments on a run's state
// give each of its Params once, and only those (provision meta refuses a
// missing or unknown one); the values come from the state up recorded.
func TestMetaArgsGiveEveryParam(t *testing.T) {
	for _, p := range All() {
		if p.Meta != nil { // the generic adapter's, from its configuration (cmd/provision's TestOIDCVerbs)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			dir := t.TempDir()
			env := "JDK='OpenJDK 21'\nHEAP='-Xms1g -Xmx1400m'\nBUILD=--db=postgres\nBASE_URL=http://127.0.0.1:8080\nUSERS=20\nISSUER=http://127.0.0.1:9000\n"
			if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte(env), 0o644); err != nil {
				t.Fatal(err)
			}
			name, args, err := p.MetaArgs(dir)
			if err != nil || name != p.Name {
				t.Fatalf("%q, %v: want the entry's name", name, err)
			}
			var got, want []string
			for i := 0; i+1 < len(args); i += 2 {
				k, v, _ := strings.Cut(args[i+1], "=")
				if args[i] != "--param" || v == "" {
					t.Errorf("%q %q: want --param K=V with the state's value", args[i], args[i+1])
				}
				got = append(got, k)
			}
			for _, prm := range p.Params {
				want = append(want, prm.Name)
			}
			if len(args)%2 != 0 || !slices.Equal(got, want) {
				t.Errorf("meta arguments %q: want --param of %q", args, want)
			}
		})
	}
}
