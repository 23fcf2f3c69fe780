package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/schema"
)

// Reference OP facts (zitadel/oidc v3.52.0 example/server/storage): service
// user sid1/verysecret may use client_credentials; the JWT-profile service
// user "service" signs with key id "key1".
const (
	refopClientID = "sid1"
	refopSecret   = "verysecret"
	refopKeyID    = "key1"
	refopService  = "service"
)

// refopURL is the reference OP's base URL from IDPBENCH_REFOP_URL.
func refopURL(t *testing.T) string {
	u := os.Getenv("IDPBENCH_REFOP_URL")
	if u == "" {
		if os.Getenv("IDPBENCH_INTEGRATION") == "1" {
			t.Fatal("IDPBENCH_INTEGRATION=1 but IDPBENCH_REFOP_URL is not set")
		}
		t.Skip("IDPBENCH_REFOP_URL not set (e.g. http://localhost:9998)")
	}
	return strings.TrimRight(u, "/")
}

// runRefop runs a 1 s step after a 200 ms warmup on the default engine
// (epoll on Linux) and asserts it is clean.
func runRefop(t *testing.T, args ...string) *schema.Step {
	t.Helper()
	args = append([]string{"-c", "4", "--warmup", "200ms", "--duration", "1s", "--product", "refop"}, args...)
	code, stdout, stderr := runArgs(context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := schema.DecodeStep(strings.NewReader(stdout), "-")
	if err != nil {
		t.Fatal(err)
	}
	// Iteration scenarios always run on net/http.
	engine := map[bool]string{true: load.EngineEpoll, false: load.EngineRaw}[runtime.GOOS == "linux"]
	switch {
	case s.CountUnit == schema.CountIterations:
		engine = load.EngineNetHTTP
	case s.RateRPS > 0: // rate mode runs on raw
		engine = load.EngineRaw
	}
	if s.Requests == 0 || s.Errors.Total() != 0 || s.OK != s.Requests || s.Driver.Engine != engine {
		t.Fatalf("requests %d ok %d errors %+v codes %v engine %q", s.Requests, s.OK, s.Errors, s.StatusCodes, s.Driver.Engine)
	}
	t.Logf("%s", strings.TrimSpace(stderr))
	return s
}

func TestRefop(t *testing.T) {
	base := refopURL(t)
	dir := t.TempDir()
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	secretFile := writeFile(t, dir, "secret", refopSecret+"\n") // 0600
	t.Run("discovery", func(t *testing.T) {
		runRefop(t, "--url", base+"/.well-known/openid-configuration", "--scenario", "discovery")
	})
	t.Run("discovery/rate", func(t *testing.T) {
		s := runRefop(t, "--url", base+"/.well-known/openid-configuration", "--scenario", "discovery", "--rate", "400")
		if s.Requests != 400 || s.LatencyModel != schema.ModelOpenLoop || s.CorrectedLatencyMS == nil ||
			s.CorrectedLatencyMS.P50 < s.LatencyMS.P50 {
			t.Errorf("%d requests, model %q, corrected %+v, service %+v: want the 400 due in 1 s at 400/s, open loop",
				s.Requests, s.LatencyModel, s.CorrectedLatencyMS, s.LatencyMS)
		}
	})
	for _, auth := range []string{"basic", "post"} {
		t.Run("client_credentials/"+auth, func(t *testing.T) {
			runRefop(t, "--url", base+"/oauth/token", "--scenario", "client_credentials", "--scope", "openid",
				"--client-id", refopClientID, "--client-secret-file", secretFile, "--client-auth", auth)
		})
	}
	t.Run("userinfo", func(t *testing.T) {
		at := refopToken(t, base)
		probe(t, http.MethodGet, base+"/userinfo", "", map[string]string{"Authorization": "Bearer " + at}, "sub")
		pool := writeFile(t, dir, "at.pool", "# idpbench-pool kind=access_token\n"+at+"\n")
		runRefop(t, "--url", base+"/userinfo", "--scenario", "userinfo", "--pool", pool)
	})
	t.Run("introspect", func(t *testing.T) {
		at := refopToken(t, base)
		probe(t, http.MethodPost, base+"/oauth/introspect", "token="+url.QueryEscape(at),
			map[string]string{"Authorization": basicAuth(refopClientID, refopSecret)}, "active")
		pool := writeFile(t, dir, "at2.pool", at+"\n")
		runRefop(t, "--url", base+"/oauth/introspect", "--scenario", "introspect", "--pool", pool,
			"--client-id", refopClientID, "--client-secret-file", secretFile)
	})
	t.Run("jwt_bearer", func(t *testing.T) {
		key := refopKey(t)
		var lines []string
		for range 4 {
			lines = append(lines, signAssertion(t, key, base+"/"))
		}
		pool := writeFile(t, dir, "jwt.pool", "# idpbench-pool kind=assertion\n"+strings.Join(lines, "\n")+"\n")
		s := runRefop(t, "--url", base+"/oauth/token", "--scenario", "jwt_bearer", "--scope", "openid",
			"--pool", pool)
		if s.Pool == nil || s.Pool.Used != 4 || s.Pool.Kind != "assertion" {
			t.Errorf("pool = %+v", s.Pool)
		}
	})
}

// TestRefopIterations runs the iteration scenarios against the reference
// OP: the web client's login through the example's login page (the
// adapter's refop_login protocol) and client_credentials -> userinfo,
// whose userinfo answers a client's token with 403 after validating it.
func TestRefopIterations(t *testing.T) {
	base := refopURL(t)
	dir := t.TempDir()
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	t.Setenv("IDPBENCH_PASSWORD", "")
	t.Run("auth_code", func(t *testing.T) {
		s := runRefop(t, "--url", base+"/auth", "--scenario", "auth_code", "--login", "refop",
			"--token-url", base+"/oauth/token", "--redirect-uri", "http://localhost:9999/auth/callback",
			"--client-id", "web", "--client-secret-file", writeFile(t, dir, "web", "secret\n"),
			"--username", "test-user@localhost", "--password-file", writeFile(t, dir, "pw", "verysecure\n"),
			"--scope", "openid offline_access")
		checkIterations(t, s, "login_authorize", "login_form", "login_submit", "login_callback", "oidc_token")
	})
	t.Run("client_credentials_login", func(t *testing.T) {
		s := runRefop(t, "--url", base+"/oauth/token", "--scenario", "client_credentials_login",
			"--userinfo-url", base+"/userinfo", "--userinfo-check", "403", "--scope", "openid",
			"--client-id", refopClientID, "--client-secret-file", writeFile(t, dir, "sid1", refopSecret+"\n"))
		checkIterations(t, s, "oidc_token", "oidc_user_info")
		if s.RequestsByName["oidc_user_info"].StatusCodes["403"] != s.Requests {
			t.Errorf("userinfo status codes %v", s.RequestsByName["oidc_user_info"].StatusCodes)
		}
	})
}

// TestHydraAuthCode runs the headless login/consent flow against Hydra.
func TestHydraAuthCode(t *testing.T) {
	env := map[string]string{}
	for _, k := range []string{"IDPBENCH_HYDRA_PUBLIC", "IDPBENCH_HYDRA_ADMIN", "IDPBENCH_HYDRA_CLIENT_ID", "IDPBENCH_HYDRA_CLIENT_SECRET_FILE"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			if os.Getenv("IDPBENCH_INTEGRATION") == "1" {
				t.Fatalf("IDPBENCH_INTEGRATION=1 but %s is not set", k)
			}
			t.Skipf("%s not set", k)
		}
	}
	public := strings.TrimRight(env["IDPBENCH_HYDRA_PUBLIC"], "/")
	redirect := os.Getenv("IDPBENCH_HYDRA_REDIRECT_URI")
	if redirect == "" {
		redirect = "http://127.0.0.1/cb"
	}
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	code, stdout, stderr := runArgs(context.Background(), "-c", "2", "--warmup", "200ms", "--duration", "1s",
		"--product", "hydra", "--url", public+"/oauth2/auth", "--scenario", "auth_code", "--login", "hydra",
		"--token-url", public+"/oauth2/token", "--admin-url", env["IDPBENCH_HYDRA_ADMIN"], "--redirect-uri", redirect,
		"--client-id", env["IDPBENCH_HYDRA_CLIENT_ID"], "--client-secret-file", env["IDPBENCH_HYDRA_CLIENT_SECRET_FILE"],
		"--username", "it-user%d", "--users", "3", "--scope", "openid offline_access")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := schema.DecodeStep(strings.NewReader(stdout), "-")
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests == 0 || s.Errors.Total() != 0 {
		t.Fatalf("iterations %d, errors %+v: %s", s.Requests, s.Errors, stderr)
	}
	checkIterations(t, s, "login_authorize", "login_accept", "login_verifier", "login_consent", "login_callback", "oidc_token")
	t.Logf("%s", strings.TrimSpace(stderr))
}

// checkIterations asserts a clean iteration step: every named request
// sent once per iteration, in order, all ok.
func checkIterations(t *testing.T, s *schema.Step, order ...string) {
	t.Helper()
	if s.CountUnit != schema.CountIterations || strings.Join(s.RequestOrder, ",") != strings.Join(order, ",") {
		t.Fatalf("count_unit %q, request_order %v, want %v", s.CountUnit, s.RequestOrder, order)
	}
	for _, name := range order {
		if nr := s.RequestsByName[name]; nr.Requests != s.Requests || nr.OK != s.Requests {
			t.Errorf("%s: %d requests, %d ok, for %d iterations", name, nr.Requests, nr.OK, s.Requests)
		}
	}
	if s.HTTPRequests != s.Requests*int64(len(order)) {
		t.Errorf("http_requests %d for %d iterations", s.HTTPRequests, s.Requests)
	}
}

// refopToken obtains an access token with a direct client_credentials POST.
func refopToken(t *testing.T, base string) string {
	t.Helper()
	body := doRequest(t, http.MethodPost, base+"/oauth/token", "grant_type=client_credentials&scope=openid",
		map[string]string{"Authorization": basicAuth(refopClientID, refopSecret)}, 200)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token response %q: %v", body, err)
	}
	return tok.AccessToken
}

// probe skips the test when the reference OP does not accept the request
// (its example storage only serves users id1/id2 at userinfo and lets only
// a token's audience introspect it, which sid1 cannot authenticate as).
func probe(t *testing.T, method, target, form string, header map[string]string, field string) {
	t.Helper()
	body := doRequest(t, method, target, form, header, 0)
	var m map[string]any
	json.Unmarshal(body, &m)
	if v, ok := m[field]; !ok || v == false || v == "" {
		t.Skipf("reference OP does not accept a client_credentials token here: %s %s -> %.120s", method, target, body)
	}
}

func doRequest(t *testing.T, method, target, form string, header map[string]string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		t.Fatalf("%s %s: status %d: %s", method, target, resp.StatusCode, body)
	}
	return body
}

func basicAuth(id, secret string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return req.Header.Get("Authorization")
}

// refopKey loads the service user's private key from the module cache, or
// from IDPBENCH_REFOP_KEY.
func refopKey(t *testing.T) any {
	path := os.Getenv("IDPBENCH_REFOP_KEY")
	if path == "" {
		home, _ := os.UserHomeDir()
		path = filepath.Join(home, "go/pkg/mod/github.com/zitadel/oidc/v3@v3.52.0/example/server/service-key1.pem")
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no service key for the jwt-bearer grant (set IDPBENCH_REFOP_KEY): %v", err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(pem)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func signAssertion(t *testing.T, key any, issuer string) string {
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": refopService, "sub": refopService, "aud": issuer,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": fmt.Sprint(now.UnixNano()),
	})
	tok.Header["kid"] = refopKeyID
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
