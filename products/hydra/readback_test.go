package hydra

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/readback"
	"github.com/idpbench/idpbench/internal/readback/readbacktest"
	"github.com/idpbench/idpbench/internal/schema"
)

func TestDescribeHash(t *testing.T) {
	tests := []struct{ hash, want string }{
		{"$pbkdf2-sha256$i=25000,l=32$c2FsdA$aGFzaA", "pbkdf2-sha256, 25000 iterations, 32-byte key"},
		{"$2a$10$abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUVWXYZ01234", "bcrypt, cost 10"},
		{"$argon2id$m=65536,t=1,p=2$c2FsdA$aGFzaA", "argon2id, m=65536, t=1, p=2"},
		{"plaintext", ""},
		{"$2a$x$abc", ""},
	}
	for _, tt := range tests {
		got, err := describeHash(tt.hash)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.hash, got, err, tt.want)
		}
		if strings.Contains(got, "aGFzaA") || strings.Contains(got, "c2FsdA") {
			t.Errorf("%s: the description %q holds the salt or the hash", tt.hash, got)
		}
	}
}

func TestHydraVersionAndWant(t *testing.T) {
	srv := readbacktest.Serve(t, "/version", `{"version":"v2.3.0"}`)
	r := readback.NewReader(readback.Config{Product: "hydra", AdminURL: readbacktest.URL(t, srv.URL), Timeout: 5 * time.Second})
	if err := readVersion(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if v := r.Record().Version; v != "v2.3.0" {
		t.Errorf("version %q", v)
	}
}

// TestReadNeedsTheAdminURL: a missing source is named.
func TestReadNeedsTheAdminURL(t *testing.T) {
	_, err := readback.Read(context.Background(), readback.Config{Product: "hydra", Reads: readFacts, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "--admin-url") {
		t.Errorf("hydra without --admin-url: %v", err)
	}
}

// TestHydraIntegration reads the facts of the Hydra scripts/test.sh runs.
func TestHydraIntegration(t *testing.T) {
	admin, dsn := os.Getenv("IDPBENCH_HYDRA_ADMIN"), os.Getenv("IDPBENCH_PG_DSN")
	if admin == "" || dsn == "" {
		if os.Getenv("IDPBENCH_INTEGRATION") == "1" {
			t.Fatal("IDPBENCH_INTEGRATION=1 but IDPBENCH_HYDRA_ADMIN or IDPBENCH_PG_DSN is not set")
		}
		t.Skip("IDPBENCH_HYDRA_ADMIN and IDPBENCH_PG_DSN not set (scripts/test.sh sets them)")
	}
	u := readbacktest.URL(t, dsn)
	u.Path = "/hydra"
	secret, err := os.ReadFile(os.Getenv("IDPBENCH_HYDRA_CLIENT_SECRET_FILE"))
	if err != nil {
		t.Fatalf("IDPBENCH_HYDRA_CLIENT_SECRET_FILE: %v", err)
	}
	f, err := readback.Read(context.Background(), readback.Config{Product: "hydra", Reads: readFacts, AdminURL: readbacktest.URL(t, admin), Postgres: u.String(),
		ClientID: "bench-svc", ClientSecret: strings.TrimSpace(string(secret)), TokenURL: readbacktest.URL(t, os.Getenv("IDPBENCH_HYDRA_PUBLIC")+"oauth2/token"),
		Timeout: 10 * time.Second, WantVersion: "v2.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]schema.Fact{}
	for _, x := range f.Facts {
		byName[x.Name] = x
	}
	if h := byName["client secret hashing"]; h.Source != schema.FactRead || !strings.HasPrefix(h.Value, "pbkdf2-sha256, 25000 iterations") {
		t.Errorf("client secret hashing %+v, want pbkdf2-sha256 with Hydra's default 25000 iterations, read", h)
	}
	if l := byName["access token lifespan"]; l.Value != "3600 s" {
		t.Errorf("access token lifespan %+v, want 3600 s (Hydra's default 1h)", l)
	}
	if tf := byName["access token format"]; tf.Value != "opaque (not a JWT)" {
		t.Errorf("access token format %+v, want opaque (Hydra's default strategy)", tf)
	}
}
