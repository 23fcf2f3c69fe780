package composefile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoad: the file's service order, extends resolved (the base's limit,
// the environments merged), mem_limit as the limit, a service without one.
func TestLoad(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "app.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"zeta", "alpha", "mid"}; !slices.Equal(p.Order, want) {
		t.Errorf("Order = %q, want %q", p.Order, want)
	}
	if want := []string{"alpha", "mid", "zeta"}; !slices.Equal(p.Names(), want) {
		t.Errorf("Names = %q, want %q", p.Names(), want)
	}
	for name, want := range map[string]string{"zeta": "1G", "alpha": "512M", "mid": ""} {
		if got := p.Services[name].Memory(); got != want {
			t.Errorf("%s: Memory = %q, want %q", name, got, want)
		}
	}
	env := p.Services["zeta"].Env()
	if env["POSTGRES_USER"] != "idpbench" || env["POSTGRES_DB"] != "app" {
		t.Errorf("zeta: environment %v, want the base's POSTGRES_USER and its own POSTGRES_DB", env)
	}
	if p.Services["zeta"].Image != "postgres:15.18" || p.Services["alpha"].Restart != "no" {
		t.Errorf("zeta image %q, alpha restart %q: want the extended image and the merged anchor", p.Services["zeta"].Image, p.Services["alpha"].Restart)
	}
}

// TestLoadStrict: a key the loader does not know fails the load, naming the
// file and the service; so does a missing file.
func TestLoadStrict(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "typo.yml"))
	if err == nil || !strings.Contains(err.Error(), "typo.yml") || !strings.Contains(err.Error(), "healtcheck") {
		t.Errorf("Load(typo.yml) = %v, want an error naming the file and healtcheck", err)
	}
	if _, err := Load(filepath.Join("testdata", "none.yml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// TestRecipe: a build string is the context; a mapping's context and
// dockerfile default as compose's do; no build, no recipe.
func TestRecipe(t *testing.T) {
	cases := []struct {
		build           any
		context, recipe string
	}{
		{nil, "", ""},
		{"keycloak", "keycloak", "Dockerfile"},
		{map[string]any{"context": "."}, ".", "Dockerfile"},
		{map[string]any{"dockerfile": "Containerfile"}, ".", "Containerfile"},
		{map[string]any{"context": "img", "dockerfile": "x/Dockerfile"}, "img", "x/Dockerfile"},
	}
	for _, tc := range cases {
		if c, d := (Service{Build: tc.build}).Recipe(); c != tc.context || d != tc.recipe {
			t.Errorf("Recipe of build %v = %q, %q; want %q, %q", tc.build, c, d, tc.context, tc.recipe)
		}
	}
}

func TestImageVar(t *testing.T) {
	for _, tc := range []struct{ image, name, def, want string }{
		{"${IDPBENCH_IMAGE_HYDRA:-oryd/hydra:v2.3.0}", "IDPBENCH_IMAGE_HYDRA", "oryd/hydra:v2.3.0", "oryd/hydra:v2.3.0"},
		{"oryd/hydra:v2.3.0", "", "", "oryd/hydra:v2.3.0"},
		{"${IDPBENCH_IMAGE_HYDRA}", "", "", "${IDPBENCH_IMAGE_HYDRA}"},         // no default
		{"${OTHER:-oryd/hydra:v2.3.0}", "", "", "${OTHER:-oryd/hydra:v2.3.0}"}, // not ours
		{"ghcr.io/z/z:${V:-latest}", "", "", "ghcr.io/z/z:${V:-latest}"},       // part of a ref
		{"${IDPBENCH_IMAGE_X:-a:${V}}", "", "", "${IDPBENCH_IMAGE_X:-a:${V}}"}, // nested
	} {
		s := Service{Image: tc.image}
		name, def, ok := s.ImageVar()
		if name != tc.name || def != tc.def || ok != (tc.name != "") || s.DefaultImage() != tc.want {
			t.Errorf("%q: ImageVar %q %q %v, DefaultImage %q; want %q %q, %q", tc.image, name, def, ok, s.DefaultImage(), tc.name, tc.def, tc.want)
		}
	}
}
