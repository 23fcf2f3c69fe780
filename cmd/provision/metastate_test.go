package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products"
)

// fixtureState is a state directory holding the state.env of
// products' fabricated state of product, its cluster
// (PG_SHARED_DIR) replaced by pgdir.
func fixtureState(t *testing.T, product, pgdir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "products", "testdata", "args", product+" state", "state.env"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "PG_SHARED_DIR=") {
			env = append(env, l)
		}
	}
	st := testState(t, product)
	write(t, filepath.Join(st, "state.env"), strings.Join(append(env, "PG_SHARED_DIR="+pgdir), "\n")+"\n")
	return st
}

// TestMetaFromState: without --endpoint flags the endpoints are what
// provision args endpoint answers on the same state for every scenario
// the product runs, and the N/A reasons are provision na's; a cluster
// recorded whose pg.env is gone is not asked (no database), and a native
// state.env gives no compose settings.
func TestMetaFromState(t *testing.T) {
	for _, name := range []string{"hydra", "keycloak", "refop", "zitadel"} {
		t.Run(name, func(t *testing.T) {
			p, _ := products.Lookup(name)
			st := fixtureState(t, name, t.TempDir())
			args := []string{"meta", "--product", name, "--product-version", "v", "--state", st}
			if name == "keycloak" {
				args = append(args, keycloakParams...)
			}
			code, stdout, stderr := runArgs(t, context.Background(), args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			m := decode(t, stdout)
			want := map[string]string{}
			for _, s := range product.Scenarios() {
				_, na, _ := runArgs(t, context.Background(), "na", name, s)
				if na != "" {
					if m.ScenarioNA[s]+"\n" != na {
						t.Errorf("%s: N/A reason %q, provision na says %q", s, m.ScenarioNA[s], na)
					}
					continue
				}
				code, url, stderr := runArgs(t, context.Background(), "args", "--product", name, "--state", st, "endpoint", s)
				if code != 0 || url == "" {
					t.Fatalf("args endpoint %s: exit %d: %s", s, code, stderr)
				}
				want[s] = strings.TrimSuffix(url, "\n")
			}
			if !maps.Equal(m.Endpoints, want) || len(m.ScenarioNA) != len(p.NA) || m.Database != nil || m.Settings["mode"] != "" {
				t.Errorf("endpoints %v (want %v), scenario_na %v, database %v, mode %q", m.Endpoints, want, m.ScenarioNA, m.Database, m.Settings["mode"])
			}
		})
	}
}

// TestMetaStateGaps: a state.env the table cannot be filled from is a
// warning and a record without endpoints (the shell left them out
// silently); compose mode without its file and a recorded cluster that
// does not answer fail the record (exit 1), naming what is missing.
func TestMetaStateGaps(t *testing.T) {
	st := testState(t, "hydra")
	write(t, filepath.Join(st, "state.env"), "PUBLIC_PORT=1\n")
	code, stdout, stderr := runArgs(t, context.Background(), "meta", "--product", "hydra", "--product-version", "v", "--state", st)
	if m := decode(t, stdout); code != 0 || m.Endpoints != nil ||
		!strings.Contains(stderr, "provision meta: warning: the record has no endpoints: ISSUER is not recorded") {
		t.Errorf("exit %d, endpoints %v, stderr %q", code, m.Endpoints, stderr)
	}

	write(t, filepath.Join(st, "state.env"), "MODE=compose\n")
	if code, stdout, stderr := runArgs(t, context.Background(), "meta", "--product", "hydra", "--product-version", "v", "--state", st); code != 1 ||
		stdout != "" || !strings.Contains(stderr, "COMPOSE_FILE is not recorded") {
		t.Errorf("compose without its file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing answers there now
	pg := t.TempDir()
	write(t, filepath.Join(pg, "pg.env"), fmt.Sprintf("PG_PORT='%d'\n", port))
	st = fixtureState(t, "refop", pg)
	out := filepath.Join(t.TempDir(), "meta.json")
	code, stdout, stderr = runArgs(t, context.Background(), "meta", "--product", "refop", "--product-version", "v", "--state", st, "-o", out)
	if _, err := os.Stat(out); code != 1 || stdout != "" || err == nil ||
		!strings.HasPrefix(stderr, "provision meta: reading the version and settings of the PostgreSQL cluster "+pg+": ") {
		t.Errorf("a cluster that does not answer: exit %d, stdout %q, stderr %q, %s written: %v", code, stdout, stderr, out, err == nil)
	}
}

// TestMetaDatabase asks a real PostgreSQL (IDPBENCH_PG_DSN, as
// scripts/test.sh sets it for the integration runs; skipped without it),
// the cluster the state records through its pg.env's port: the record's
// database holds server_version and every reported setting, as
// current_setting shows them (shared_buffers with its unit).
func TestMetaDatabase(t *testing.T) {
	dsn := os.Getenv("IDPBENCH_PG_DSN")
	if dsn == "" {
		t.Skip("IDPBENCH_PG_DSN not set: no PostgreSQL to ask")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pg := t.TempDir()
	write(t, filepath.Join(pg, "pg.env"), fmt.Sprintf("PG_PORT='%d'\n", cfg.Port))
	st := fixtureState(t, "hydra", pg)
	code, stdout, stderr := runArgs(t, context.Background(), "meta", "--product", "hydra", "--product-version", "v", "--state", st)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	db := decode(t, stdout).Database
	keys := make([]string, 0, len(db))
	for k := range db {
		keys = append(keys, k)
	}
	want := append([]string{"server_version"}, product.PGReported...)
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) || db["server_version"] == "" || !regexp.MustCompile(`^[0-9]+[kMGT]B$`).MatchString(db["shared_buffers"]) {
		t.Errorf("database %v; want server_version and %v", db, product.PGReported)
	}
}

// TestReadImages: STATE/images.json as compose_images writes it; a missing
// file is no images, an entry without an ID or with another origin fails.
func TestReadImages(t *testing.T) {
	dir := t.TempDir()
	if got, err := readImages(filepath.Join(dir, "none.json")); err != nil || got != nil {
		t.Errorf("no file: %v, %v; want nothing", got, err)
	}
	for name, tc := range map[string]struct {
		body    string
		wantErr bool
	}{
		"ok":        {`[{"service":"hydra","container":"idpbench-hydra","ref":"idpbench/hydra:v2.3.0-local","id":"sha256:ab","origin":"local","stands_for":"oryd/hydra:v2.3.0"}]`, false},
		"no id":     {`[{"service":"hydra","origin":"official"}]`, true},
		"bad kind":  {`[{"service":"hydra","id":"sha256:ab","origin":"mirror"}]`, true},
		"not json":  {`{`, true},
		"empty set": {`[]`, false},
	} {
		path := filepath.Join(dir, name+".json")
		write(t, path, tc.body)
		got, err := readImages(path)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: %v, err %v; want error %v", name, got, err, tc.wantErr)
		}
		if name == "ok" && (len(got) != 1 || got[0].StandsFor != "oryd/hydra:v2.3.0" || got[0].ID != "sha256:ab") {
			t.Errorf("ok: %+v", got)
		}
	}
}
