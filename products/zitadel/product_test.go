package zitadel

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/product"
)

// TestStateMissing: what an answer needs and the state lacks is the
// state's error, naming it; a missing setup summary is SetupErr only, so
// the endpoints of a product that is up but not set up are still known.
func TestStateMissing(t *testing.T) {
	if _, err := product.ReadState(t.TempDir(), "hydra"); err == nil || !strings.Contains(err.Error(), "run up first") {
		t.Errorf("ReadState of an empty directory: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("ISSUER=http://localhost:8080\nPG_SHARED_DIR=/nonexistent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := product.ReadState(dir, "zitadel")
	if err != nil {
		t.Fatal(err)
	}
	z := Product()
	tab := z.Answers.Table(st)
	if st.Err() != nil || tab.Scenarios["userinfo"].Endpoint != "http://localhost:8080/oidc/v1/userinfo" {
		t.Errorf("endpoints before setup: %v, %q", st.Err(), tab.Scenarios["userinfo"].Endpoint)
	}
	if err := st.SetupErr(); err == nil || !strings.Contains(err.Error(), "zitadel-setup.json (run setup first)") {
		t.Errorf("SetupErr before setup: %v", err)
	}
	_ = z.Answers.Config(st)
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "PORT is not recorded") {
		t.Errorf("Config without PORT: %v", err)
	}
	st, _ = product.ReadState(dir, "zitadel")
	if st.PGPort(); st.Err() == nil || !errors.Is(st.Err(), os.ErrNotExist) || !strings.Contains(st.Err().Error(), "/nonexistent") {
		t.Errorf("PGPort of a missing cluster: %v", st.Err())
	}
}
