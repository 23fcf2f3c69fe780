package report

import (
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestImageText(t *testing.T) {
	for _, tc := range []struct {
		im   schema.Image
		want string
	}{
		{schema.Image{Service: "hydra", Ref: "oryd/hydra:v2.3.0", ID: "sha256:ab", Origin: schema.ImageOfficial},
			"hydra: oryd/hydra:v2.3.0 (sha256:ab), official"},
		{schema.Image{Service: "postgres", Ref: "idpbench/postgres:15.18-local", ID: "sha256:cd", Origin: schema.ImageLocal, StandsFor: "postgres:15.18-bookworm"},
			"postgres: idpbench/postgres:15.18-local (sha256:cd), local equivalent of postgres:15.18-bookworm, built here (the official image could not be pulled)"},
	} {
		if got := imageText(tc.im); got != tc.want {
			t.Errorf("imageText(%+v) = %q, want %q", tc.im, got, tc.want)
		}
	}
}
