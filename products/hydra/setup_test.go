package hydra

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeHydra answers POST /admin/clients (created: 201; createStatus
// otherwise) and POST /oauth2/token with Basic credentials of the created
// client (200, else 401). The secret it was given, if any, is in secret.
type fakeHydra struct {
	createStatus int
	created      map[string]any
	secret       string
}

func (f *fakeHydra) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/admin/clients":
		if f.createStatus != 0 && f.createStatus != http.StatusCreated {
			w.WriteHeader(f.createStatus)
			w.Write([]byte(`{"error":"conflict","error_description":"client exists"}`))
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&f.created); err != nil || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.secret, _ = f.created["client_secret"].(string)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPost && r.URL.Path == "/oauth2/token":
		id, secret, ok := r.BasicAuth()
		if !ok || id != f.created["client_id"] || secret != f.secret || r.FormValue("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusUnauthorized)
			// a server that echoes what it was sent: the error must not
			w.Write([]byte(`{"error":"invalid_client","error_description":"bad secret ` + secret + `"}`))
			return
		}
		w.Write([]byte(`{"access_token":"at","token_type":"bearer","expires_in":3600}`))
	default:
		http.NotFound(w, r)
	}
}

func setupWith(t *testing.T, f http.Handler) (SetupConfig, string, string, error) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := SetupConfig{AdminURL: srv.URL, Issuer: srv.URL + "/", ClientID: "bench", RedirectURI: "http://127.0.0.1/cb",
		OutDir: t.TempDir(), RequestTimeout: 5 * time.Second}
	var out, errb bytes.Buffer
	err := Setup(context.Background(), cfg, &out, &errb)
	return cfg, out.String(), errb.String(), err
}

func TestSetup(t *testing.T) {
	f := &fakeHydra{}
	cfg, out, progress, err := setupWith(t, f)
	if err != nil {
		t.Fatalf("Setup: %v (stderr %q)", err, progress)
	}
	// The client as the scenarios need it.
	if f.created["client_id"] != "bench" || f.created["token_endpoint_auth_method"] != "client_secret_basic" ||
		f.created["scope"] != Scope || !slices.Equal(toStrings(f.created["grant_types"]), GrantTypes) ||
		!slices.Equal(toStrings(f.created["redirect_uris"]), []string{cfg.RedirectURI}) ||
		!slices.Equal(toStrings(f.created["response_types"]), []string{"code"}) || len(f.secret) < 26 {
		t.Errorf("created %v", f.created)
	}
	// The secret file: 0600, the secret the check used; the summary and
	// the progress never carry it.
	path := filepath.Join(cfg.OutDir, "bench")
	data, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(data) != f.secret+"\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file %q (%v), mode %v; want the created secret, 0600", data, err, fi.Mode())
	}
	var sum Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Schema != SummarySchema || sum.SecretFile != path ||
		sum.TokenEndpoint != strings.TrimRight(cfg.AdminURL, "/")+"/oauth2/token" {
		t.Errorf("summary %s (%v)", out, err)
	}
	if strings.Contains(out+progress, f.secret) {
		t.Errorf("the secret is in stdout or stderr:\n%s\n%s", out, progress)
	}
	if !strings.Contains(progress, "[3/3] secret file") {
		t.Errorf("progress %q", progress)
	}
}

func TestSetupFails(t *testing.T) {
	tests := []struct {
		name        string
		f           *fakeHydra
		rejectCheck bool // the token endpoint knows another secret than the one created
		want        string
	}{
		{"client exists", &fakeHydra{createStatus: http.StatusConflict}, false, "creating client bench: HTTP 409: conflict client exists"},
		{"check rejected", &fakeHydra{}, true, "client_credentials check: HTTP 401: invalid_client bad secret [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Handler(tt.f)
			if tt.rejectCheck {
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/oauth2/token" {
						tt.f.secret = "another"
					}
					tt.f.ServeHTTP(w, r)
				})
			}
			cfg, out, _, err := setupWith(t, h)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(cfg.OutDir); len(entries) != 0 || out != "" {
				t.Errorf("after a failure: %d files in the out dir, stdout %q; want none", len(entries), out)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	ok := SetupConfig{AdminURL: "http://127.0.0.1:4445", Issuer: "http://127.0.0.1:4444/", ClientID: "bench", RedirectURI: "http://127.0.0.1/cb", OutDir: dir}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tt := range []struct {
		mod  func(*SetupConfig)
		want string
	}{
		{func(c *SetupConfig) { c.AdminURL = "" }, "--admin-url"},
		{func(c *SetupConfig) { c.Issuer = "ftp://x" }, "--issuer"},
		{func(c *SetupConfig) { c.RedirectURI = "/cb" }, "--redirect-uri"},
		{func(c *SetupConfig) { c.ClientID = "a/b" }, "--client-id"},
		{func(c *SetupConfig) { c.OutDir = filepath.Join(dir, "nosuch") }, "--out-dir"},
	} {
		c := ok
		tt.mod(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tt.want+":") {
			t.Errorf("err %v, want one naming %s", err, tt.want)
		}
	}
}

func toStrings(v any) []string {
	a, _ := v.([]any)
	s := make([]string, len(a))
	for i, x := range a {
		s[i], _ = x.(string)
	}
	return s
}
