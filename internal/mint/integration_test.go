package mint

import (
	"cmp"
	"context"
	"encoding/json"
	"go/build"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/mint/minttest"
	"github.com/idpbench/idpbench/internal/pool"
)

// Integration tests run against real servers named by the environment and
// are skipped without them, unless IDPBENCH_INTEGRATION=1 (then they fail).
//
//	IDPBENCH_REFOP_URL      issuer of the reference OP (zitadel/oidc example server),
//	                        e.g. http://localhost:9998/
//	IDPBENCH_REFOP_KEY      its service-key1.pem (default: in the Go module cache)
//	IDPBENCH_HYDRA_PUBLIC, IDPBENCH_HYDRA_ADMIN, IDPBENCH_HYDRA_CLIENT_ID,
//	IDPBENCH_HYDRA_CLIENT_SECRET_FILE [, IDPBENCH_HYDRA_REDIRECT_URI]

func requireEnv(t *testing.T, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	for i, n := range names {
		vals[i] = os.Getenv(n)
		if vals[i] != "" {
			continue
		}
		if os.Getenv("IDPBENCH_INTEGRATION") == "1" {
			t.Fatalf("IDPBENCH_INTEGRATION=1 but %s is not set", n)
		}
		t.Skipf("%s not set", n)
	}
	return vals
}

func refopKey(t *testing.T) string {
	if k := os.Getenv("IDPBENCH_REFOP_KEY"); k != "" {
		return k
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		cache = filepath.Join(build.Default.GOPATH, "pkg", "mod")
	}
	k := filepath.Join(cache, "github.com/zitadel/oidc/v3@v3.52.0/example/server/service-key1.pem")
	if _, err := os.Stat(k); err != nil {
		t.Fatalf("reference OP key: %v (set IDPBENCH_REFOP_KEY)", err)
	}
	return k
}

// mintInto runs cfg and returns the pool it wrote.
func mintInto(t *testing.T, cfg Config) *pool.Pool {
	t.Helper()
	cfg.Output = filepath.Join(t.TempDir(), "p.pool")
	cfg.Users, cfg.MaxFailures, cfg.Timeout, cfg.Product = max(cfg.Users, 1), cmp.Or(cfg.MaxFailures, 3), 10*time.Second, "it"
	cfg.ClientAuth, cfg.Emit, cfg.TTL = "basic", cmp.Or(cfg.Emit, EmitAccessToken), time.Hour
	if err := Run(context.Background(), cfg, io.Discard, io.Discard); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return minttest.ReadPool(t, cfg.Output)
}

// post sends a form and returns the status and decoded JSON body.
func post(t *testing.T, endpoint string, form url.Values, user, pass string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	return doJSON(t, req)
}

func doJSON(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func userinfoStatus(t *testing.T, endpoint, tok string) int {
	req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	code, _ := doJSON(t, req)
	return code
}

func TestRefOPClientCredentials(t *testing.T) {
	issuer := requireEnv(t, "IDPBENCH_REFOP_URL")[0]
	p := mintInto(t, Config{Flow: FlowClientCredentials, Issuer: issuer, ClientID: "sid1", ClientSecret: "verysecret",
		Scope: "openid", N: 40, Parallel: 4})
	if len(p.Creds) != 40 || p.Header["expires"] == "unknown" {
		t.Fatalf("pool header %v, %d credentials", p.Header, len(p.Creds))
	}
	// The reference OP's userinfo answers 401 for a token it cannot decode and
	// 403 for a valid token whose subject is not a user (sid1 is a service user).
	base := strings.TrimRight(issuer, "/")
	if code := userinfoStatus(t, base+"/userinfo", p.Creds[0]+"x"); code != http.StatusUnauthorized {
		t.Fatalf("tampered token: userinfo %d, want 401", code)
	}
	for _, tok := range p.Creds {
		if code := userinfoStatus(t, base+"/userinfo", tok); code != http.StatusForbidden {
			t.Errorf("minted token: userinfo %d, want 403 (valid token, service subject)", code)
		}
	}
}

func TestRefOPJWTBearerAndClientAssertion(t *testing.T) {
	issuer := requireEnv(t, "IDPBENCH_REFOP_URL")[0]
	key, base := refopKey(t), strings.TrimRight(issuer, "/")
	grants := mintInto(t, Config{Flow: FlowJWTBearer, KeyFile: key, KeyID: "key1", JWTIss: "service", Audience: issuer, N: 4, Parallel: 2})
	var tokens []string
	for _, a := range grants.Creds {
		code, body := post(t, base+"/oauth/token", url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {a}, "scope": {"openid"}}, "", "")
		tok, _ := body["access_token"].(string)
		if code != http.StatusOK || tok == "" {
			t.Fatalf("jwt-bearer grant: HTTP %d %v", code, body)
		}
		tokens = append(tokens, tok)
	}

	// private_key_jwt client authentication at the introspection endpoint:
	// the OP authenticates "service" by the same key.
	cas := mintInto(t, Config{Flow: FlowClientAssertion, KeyFile: key, KeyID: "key1", JWTIss: "service", Audience: issuer, N: 4, Parallel: 2})
	introspect := func(assertion, tok string) (int, map[string]any) {
		return post(t, base+"/oauth/introspect", url.Values{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {assertion}, "token": {tok}}, "", "")
	}
	if code, _ := introspect(cas.Creds[0][:len(cas.Creds[0])-4]+"AAAA", tokens[0]); code != http.StatusUnauthorized {
		t.Fatalf("tampered client assertion: HTTP %d, want 401", code)
	}
	for i, a := range cas.Creds {
		if code, body := introspect(a, tokens[i]); code != http.StatusOK || body["active"] == nil {
			t.Errorf("introspection with client assertion: HTTP %d %v, want 200", code, body)
		}
	}
}

func TestHydraLoginIntegration(t *testing.T) {
	env := requireEnv(t, "IDPBENCH_HYDRA_PUBLIC", "IDPBENCH_HYDRA_ADMIN", "IDPBENCH_HYDRA_CLIENT_ID", "IDPBENCH_HYDRA_CLIENT_SECRET_FILE")
	secret, err := os.ReadFile(env[3])
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Flow: FlowAdminAccept, Issuer: env[0], AdminURL: env[1], ClientID: env[2], ClientSecret: strings.TrimSpace(string(secret)),
		RedirectURI: cmp.Or(os.Getenv("IDPBENCH_HYDRA_REDIRECT_URI"), "http://127.0.0.1/cb"),
		// Hydra on DSN=memory (SQLite) answers some concurrent flows with
		// "unable to serialize access" errors: mintpool retries them.
		Scope: "openid offline_access", Subject: "it-user%d", Users: 3, N: 6, Parallel: 2, MaxFailures: 20}
	ats := mintInto(t, cfg)
	admin := strings.TrimRight(env[1], "/")
	for _, tok := range ats.Creds {
		code, body := post(t, admin+"/admin/oauth2/introspect", url.Values{"token": {tok}}, "", "")
		if code != http.StatusOK || body["active"] != true || !strings.HasPrefix(body["sub"].(string), "it-user") {
			t.Errorf("introspect minted access token: HTTP %d %v", code, body)
		}
	}
	cfg.Emit, cfg.N = EmitRefreshToken, 3
	rts := mintInto(t, cfg)
	for _, rt := range rts.Creds {
		code, body := post(t, strings.TrimRight(env[0], "/")+"/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, cfg.ClientID, cfg.ClientSecret)
		if code != http.StatusOK || body["access_token"] == nil {
			t.Errorf("refresh with minted refresh token: HTTP %d %v", code, body["error"])
		}
	}
}
