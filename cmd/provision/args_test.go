package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// argsState writes a state directory: state.env as state_set writes it,
// and the PostgreSQL cluster's pg.env it names.
func argsState(t *testing.T, env string) string {
	t.Helper()
	dir := t.TempDir()
	pg := filepath.Join(dir, "pg dir")
	if err := os.MkdirAll(pg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pg, "pg.env"), []byte("PG_PORT='5433'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env += "PG_SHARED_DIR=" + strings.ReplaceAll(pg, " ", `\ `) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestArgs: each verb prints its answer one value a line; what the
// product lacks or the state does not hold is an error (exit 1), a bad
// call a usage error (exit 2).
func TestArgs(t *testing.T) {
	hydra := argsState(t, "ISSUER=http://127.0.0.1:4444/\nADMIN_URL=http://127.0.0.1:4445\nPUBLIC_PORT=4444\nADMIN_PORT=4445\n")
	zitadel := argsState(t, "ISSUER=http://localhost:8080\n")
	if slices.Contains(answering(), "oidc") || !slices.Contains(answering(), "hydra") {
		t.Errorf("answering() = %v: want the products with answers, hydra but not the generic oidc", answering())
	}
	for _, tt := range []struct {
		product, state string
		args           []string
		code           int
		want           string // stdout, or what stderr contains
	}{
		{"hydra", hydra, []string{"endpoint", "introspect"}, 0, "http://127.0.0.1:4445/admin/oauth2/introspect\n"},
		{"hydra", hydra, []string{"pool", "introspect"}, 0, "access_token\nreuse\nclient_credentials\n--flow\nclient_credentials\n--token-url\n"},
		{"hydra", hydra, []string{"readback"}, 0, "--admin-url\nhttp://127.0.0.1:4445\n--postgres\npostgres://idpbench@127.0.0.1:5433/hydra?sslmode=disable\n"},
		{"hydra", hydra, []string{"config"}, 0, "serve:\n  public:\n    host: 127.0.0.1\n    port: 4444\n"},
		{"hydra", hydra, []string{"endpoint", "jwt_bearer"}, 1, "hydra has no jwt_bearer endpoint: the scenario is N/A"},
		{"hydra", hydra, []string{"pool", "discovery"}, 1, "hydra: discovery takes no pool"},
		{"hydra", hydra, []string{"start"}, 1, "hydra has no start arguments"},
		{"zitadel", zitadel, []string{"endpoint", "userinfo"}, 0, "http://localhost:8080/oidc/v1/userinfo\n"},
		{"zitadel", zitadel, []string{"pool", "userinfo"}, 1, "zitadel-setup.json (run setup first)"},
		// what the ladder reads in-process is no verb (product.Product.Answer)
		{"hydra", hydra, []string{"loadargs", "discovery"}, 2, `unknown verb "loadargs"`},
		{"zitadel", zitadel, []string{"config"}, 1, "PORT is not recorded in " + filepath.Join(zitadel, "state.env")},
		{"zitadel", zitadel, []string{"readback"}, 0, ""}, // reads nothing back
		{"refop", hydra, []string{"readback"}, 1, "REFOP_BIN is not recorded"},
		{"hydra", t.TempDir(), []string{"endpoint", "discovery"}, 1, "no state in"},
		{"hydra", hydra, []string{"endpoint"}, 2, "endpoint wants 1 argument(s) after the verb, got 0"},
		{"hydra", hydra, []string{"setup", "x"}, 2, "setup wants 0 argument(s)"},
		{"hydra", hydra, []string{"endpoint", "login"}, 2, `unknown scenario "login"`},
		{"hydra", hydra, []string{"version"}, 2, `unknown verb "version"`},
		// the generic adapter answers itself: refused, naming the registry's products with answers
		{"oidc", hydra, []string{"endpoint", "discovery"}, 2, `--product "oidc": want one of ` + strings.Join(answering(), ", ")},
		{"hydra", "", []string{"endpoint", "discovery"}, 2, "--state DIR is required"},
	} {
		args := append([]string{"args", "--product", tt.product, "--state", tt.state}, tt.args...)
		code, stdout, stderr := runArgs(t, context.Background(), args...)
		ok := code == tt.code
		if tt.code == 0 {
			ok = ok && stderr == "" && strings.HasPrefix(stdout, tt.want) && (tt.want != "" || stdout == "")
		} else {
			ok = ok && stdout == "" && strings.HasPrefix(stderr, "provision args: ") && strings.Contains(stderr, tt.want)
		}
		if !ok {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want %d and %q", tt.product, tt.args, code, stdout, stderr, tt.code, tt.want)
		}
	}
}
