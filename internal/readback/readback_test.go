package readback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestDescribeKeycloakHash(t *testing.T) {
	tests := []struct{ data, want, wantErr string }{
		{`{"hashIterations":5,"algorithm":"argon2","additionalParameters":{"hashLength":["32"],"memory":["7168"],"type":["id"],"version":["1.3"],"parallelism":["1"]}}`,
			"argon2, 5 iterations, hashLength 32, memory 7168 KiB, parallelism 1, type id, version 1.3", ""},
		{`{"hashIterations":210000,"algorithm":"pbkdf2-sha512","additionalParameters":{}}`, "pbkdf2-sha512, 210000 iterations", ""},
		{`{"algorithm":""}`, "", "not a password credential"},
		{`not json`, "", "not a password credential"},
	}
	for _, tt := range tests {
		got, err := describeKeycloakHash(tt.data)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.data, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.data, got, err, tt.want)
		}
	}
}

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

// TestKeycloakJVM reads the heap, the JVM and the pool from a trimmed copy
// of a running Keycloak 26.7.3's management /metrics.
func TestKeycloakJVM(t *testing.T) {
	body, err := os.ReadFile("testdata/keycloak-26.7.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, "/metrics", string(body))
	r := testReader(t, Config{Product: ProductKeycloak, Metrics: mustURL(t, srv.URL+"/metrics")})
	if err := r.keycloakJVM(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"JVM heap maximum":       "1400 MiB (1468006400 bytes)",
		"JVM":                    "Eclipse Adoptium OpenJDK Runtime Environment 25.0.3+9-LTS",
		"database pool (Agroal)": "25 connections open (25 idle, 0 in use)",
	}
	checkFacts(t, r.facts, want)
}

func TestKeycloakJVMMissingMetric(t *testing.T) {
	srv := serve(t, "/metrics", "# TYPE up gauge\nup 1\n")
	r := testReader(t, Config{Product: ProductKeycloak, Metrics: mustURL(t, srv.URL+"/metrics")})
	err := r.keycloakJVM(context.Background())
	if err == nil || !strings.Contains(err.Error(), "jvm_memory_max_bytes") {
		t.Fatalf("error %v, want one naming jvm_memory_max_bytes", err)
	}
}

func TestTokenLifespan(t *testing.T) {
	var gotAuth, gotGrant string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, secret, _ := req.BasicAuth()
		gotAuth, gotGrant = id+":"+secret, req.FormValue("grant_type")
		_, _ = w.Write([]byte(`{"access_token":"at","token_type":"Bearer","expires_in":299}`))
	}))
	t.Cleanup(srv.Close)
	r := testReader(t, Config{Product: ProductRefop, TokenURL: mustURL(t, srv.URL), ClientID: "sid1", ClientSecret: "verysecret"})
	if err := r.tokenLifespan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "sid1:verysecret" || gotGrant != "client_credentials" {
		t.Errorf("server saw auth %q grant %q", gotAuth, gotGrant)
	}
	checkFacts(t, r.facts, map[string]string{"access token lifespan (client_credentials)": "299 s (expires_in of a fresh token)"})
	for _, f := range r.facts {
		if strings.Contains(f.Value+f.From, "verysecret") || strings.Contains(f.Value, `"at"`) {
			t.Errorf("a fact holds the secret or the token: %+v", f)
		}
	}
}

func TestTokenLifespanRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	r := testReader(t, Config{Product: ProductRefop, TokenURL: mustURL(t, srv.URL), ClientID: "x", ClientSecret: "wrong"})
	err := r.tokenLifespan(context.Background())
	if err == nil || !strings.Contains(err.Error(), "status 401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error %v, want the status and no secret", err)
	}
}

func TestHydraVersionAndWant(t *testing.T) {
	srv := serve(t, "/version", `{"version":"v2.3.0"}`)
	r := testReader(t, Config{Product: ProductHydra, AdminURL: mustURL(t, srv.URL)})
	if err := r.hydraVersion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.version != "v2.3.0" {
		t.Errorf("version %q", r.version)
	}
	// The product must run the version the run states.
	if err := checkVersion(Config{Product: ProductHydra, WantVersion: "v9"}, r.version); err == nil ||
		err.Error() != `hydra reports version "v2.3.0", the run states "v9"` {
		t.Errorf("error %v, want a version mismatch", err)
	}
	if err := checkVersion(Config{Product: ProductHydra, WantVersion: "v2.3.0"}, r.version); err != nil {
		t.Error(err)
	}
}

// TestGoModuleVersion reads a dependency's version from the build info of
// a binary built here (a test binary records no dependencies).
func TestGoModuleVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "readback")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/idpbench/idpbench/cmd/readback").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	v, err := goModuleVersion(bin, "github.com/jackc/pgx/v5")
	if err != nil || !strings.HasPrefix(v, "v5.") {
		t.Errorf("pgx in the readback binary: %q, %v", v, err)
	}
	if _, err := goModuleVersion(bin, "example.com/absent"); err == nil {
		t.Error("an absent module: want an error")
	}
	// Read fails when the product runs another version than the run states.
	_, err = Read(context.Background(), Config{Product: ProductRefop, Binary: bin, Timeout: time.Second, WantVersion: "v9"})
	if err == nil || !strings.Contains(err.Error(), "built without module github.com/zitadel/oidc/v3") {
		t.Errorf("error %v, want the missing module named", err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{Product: "zitadel", Timeout: time.Second},
		{Product: ProductHydra, Timeout: time.Second, TokenURL: &url.URL{Scheme: "http", Host: "x"}},
		{Product: ProductHydra},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
	// A product's missing source is named.
	_, err := Read(context.Background(), Config{Product: ProductHydra, Timeout: time.Second})
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
	u := mustURL(t, dsn)
	u.Path = "/hydra"
	secret, err := os.ReadFile(os.Getenv("IDPBENCH_HYDRA_CLIENT_SECRET_FILE"))
	if err != nil {
		t.Fatalf("IDPBENCH_HYDRA_CLIENT_SECRET_FILE: %v", err)
	}
	f, err := Read(context.Background(), Config{Product: ProductHydra, AdminURL: mustURL(t, admin), Postgres: u.String(),
		ClientID: "bench-svc", ClientSecret: strings.TrimSpace(string(secret)), TokenURL: mustURL(t, os.Getenv("IDPBENCH_HYDRA_PUBLIC")+"oauth2/token"),
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

func testReader(t *testing.T, c Config) *reader {
	t.Helper()
	c.Timeout = 5 * time.Second
	return &reader{cfg: c, client: &http.Client{Timeout: c.Timeout}}
}

func serve(t *testing.T, path, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != path {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkFacts wants each named fact read with that value.
func checkFacts(t *testing.T, facts []schema.Fact, want map[string]string) {
	t.Helper()
	got := map[string]schema.Fact{}
	for _, f := range facts {
		got[f.Name] = f
	}
	for name, v := range want {
		f, ok := got[name]
		if !ok || f.Value != v || f.Source != schema.FactRead || f.From == "" {
			t.Errorf("fact %q = %+v, want %q, read, with its source", name, f, v)
		}
	}
}
