package readback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/readback/readbacktest"
)

func TestTokenLifespan(t *testing.T) {
	var gotAuth, gotGrant string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, secret, _ := req.BasicAuth()
		gotAuth, gotGrant = id+":"+secret, req.FormValue("grant_type")
		_, _ = w.Write([]byte(`{"access_token":"at","token_type":"Bearer","expires_in":299}`))
	}))
	t.Cleanup(srv.Close)
	r := testReader(t, Config{Product: "refop", TokenURL: readbacktest.URL(t, srv.URL), ClientID: "sid1", ClientSecret: "verysecret"})
	if err := r.tokenLifespan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "sid1:verysecret" || gotGrant != "client_credentials" {
		t.Errorf("server saw auth %q grant %q", gotAuth, gotGrant)
	}
	readbacktest.CheckFacts(t, r.facts, map[string]string{"access token lifespan (client_credentials)": "299 s (expires_in of a fresh token)"})
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
	r := testReader(t, Config{Product: "refop", TokenURL: readbacktest.URL(t, srv.URL), ClientID: "x", ClientSecret: "wrong"})
	err := r.tokenLifespan(context.Background())
	if err == nil || !strings.Contains(err.Error(), "status 401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error %v, want the status and no secret", err)
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
	v, err := GoModuleVersion(bin, "github.com/jackc/pgx/v5")
	if err != nil || !strings.HasPrefix(v, "v5.") {
		t.Errorf("pgx in the readback binary: %q, %v", v, err)
	}
	if _, err := GoModuleVersion(bin, "example.com/absent"); err == nil {
		t.Error("an absent module: want an error")
	}
}

func TestValidate(t *testing.T) {
	reads := func(context.Context, *Reader) error { return nil }
	for _, c := range []Config{
		{Product: "zitadel", Timeout: time.Second}, // nothing to read of it
		{Product: "hydra", Reads: reads, Timeout: time.Second, TokenURL: &url.URL{Scheme: "http", Host: "x"}},
		{Product: "hydra", Reads: reads},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
	// Every fact names its source; a documented one an https URL.
	for _, bad := range []func(*Reader){
		func(r *Reader) { r.Documented("storage", "in memory", "the source") },
		func(r *Reader) { r.Fact("heap", "1 GiB", "") },
	} {
		_, err := Read(context.Background(), Config{Product: "p", Timeout: time.Second,
			Reads: func(_ context.Context, r *Reader) error { bad(r); return nil }})
		if err == nil || !strings.HasPrefix(err.Error(), "p's readback: fact ") {
			t.Errorf("a fact without its source: %v", err)
		}
	}
	// The version the product reports must be the run's.
	_, err := Read(context.Background(), Config{Product: "p", Timeout: time.Second, WantVersion: "v9",
		Reads: func(_ context.Context, r *Reader) error { r.SetVersion("v2.3.0"); return nil }})
	if err == nil || err.Error() != `p reports version "v2.3.0", the run states "v9"` {
		t.Errorf("error %v, want a version mismatch", err)
	}
}

func testReader(t *testing.T, c Config) *Reader {
	t.Helper()
	c.Timeout = 5 * time.Second
	return &Reader{cfg: c, client: &http.Client{Timeout: c.Timeout}}
}
