package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/login/formlogin"
	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
	"github.com/idpbench/idpbench/internal/schema"
)

// Reference OP facts (zitadel/oidc v3.52.0 example/server/storage, as
// products/refop/adapter uses them): service user sid1/verysecret may use
// client_credentials; the JWT-profile service user "service" signs with key
// id "key1"; the web client web/secret logs the demo user in through the
// example's login page. Userinfo answers only for a user's token (a
// client's gets 403), and introspection says active only to a client in the
// token's audience whose subject is a user: so userinfo and introspect run
// on the web client's own user tokens, introspected with its credentials.
const (
	refopClientID    = "sid1"
	refopSecret      = "verysecret"
	refopKeyID       = "key1"
	refopService     = "service"
	refopWebClient   = "web"
	refopWebSecret   = "secret"
	refopUser        = "test-user@localhost"
	refopPassword    = "verysecure"
	refopRedirectURI = "http://localhost:9999/auth/callback" // the web client's registered redirect URI
)

// integration reports whether IDPBENCH_INTEGRATION=1: a missing server or
// file is then a failure, not a skip.
func integration() bool { return os.Getenv("IDPBENCH_INTEGRATION") == "1" }

// refopURL is the reference OP's base URL from IDPBENCH_REFOP_URL.
func refopURL(t *testing.T) string {
	u := os.Getenv("IDPBENCH_REFOP_URL")
	if u == "" {
		if integration() {
			t.Fatal("IDPBENCH_INTEGRATION=1 but IDPBENCH_REFOP_URL is not set")
		}
		t.Skip("IDPBENCH_REFOP_URL not set (e.g. http://localhost:9998)")
	}
	return strings.TrimRight(u, "/")
}

// runRefopStep runs a 1 s step after a 200 ms warmup and returns its record.
func runRefopStep(t *testing.T, args ...string) (*schema.Step, string) {
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
	return s, stderr
}

// runRefop runs a 1 s step after a 200 ms warmup on the default engine
// (epoll on Linux) and asserts it is clean.
func runRefop(t *testing.T, args ...string) *schema.Step {
	t.Helper()
	s, stderr := runRefopStep(t, args...)
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
		tokens := refopUserTokens(t, base, 4)
		body := doRequest(t, http.MethodGet, base+"/userinfo", "", map[string]string{"Authorization": "Bearer " + tokens[0]}, 200)
		wantField(t, "userinfo", body, "sub", func(v any) bool { s, _ := v.(string); return s != "" })
		pool := writeFile(t, dir, "user-at.pool", "# idpbench-pool kind=access_token\n"+strings.Join(tokens, "\n")+"\n")
		s := runRefop(t, "--url", base+"/userinfo", "--scenario", "userinfo", "--pool", pool)
		if s.StatusCodes["200"] != s.Requests {
			t.Errorf("status codes %v, want all %d 200", s.StatusCodes, s.Requests)
		}
	})
	t.Run("introspect", func(t *testing.T) {
		tokens := refopUserTokens(t, base, 4)
		body := doRequest(t, http.MethodPost, base+"/oauth/introspect", "token="+url.QueryEscape(tokens[0]),
			map[string]string{"Authorization": basicAuth(refopWebClient, refopWebSecret)}, 200)
		wantField(t, "introspection", body, "active", func(v any) bool { return v == true })
		pool := writeFile(t, dir, "introspect.pool", "# idpbench-pool kind=access_token\n"+strings.Join(tokens, "\n")+"\n")
		s := runRefop(t, "--url", base+"/oauth/introspect", "--scenario", "introspect", "--pool", pool,
			"--client-id", refopWebClient, "--client-secret-file", writeFile(t, dir, "web-secret", refopWebSecret+"\n"))
		if s.StatusCodes["200"] != s.Requests {
			t.Errorf("status codes %v, want all %d 200", s.StatusCodes, s.Requests)
		}
	})
	t.Run("introspect/active false fails", func(t *testing.T) {
		// The JWT-profile service user (private_key_jwt) is not in the web
		// client's tokens' audience: the OP answers active:false, which the
		// scenario's rule must count as failed, every one.
		key := refopKey(t)
		var assertions []string
		for range 4 {
			assertions = append(assertions, signAssertion(t, key, base+"/"))
		}
		tokens := writeFile(t, dir, "introspect-service.pool", strings.Join(refopUserTokens(t, base, 1), "\n")+"\n")
		s, _ := runRefopStep(t, "--url", base+"/oauth/introspect", "--scenario", "introspect", "--pool", tokens,
			"--client-auth", "assertion", "--client-assertion-pool",
			writeFile(t, dir, "service-assertions.pool", "# idpbench-pool kind=assertion\n"+strings.Join(assertions, "\n")+"\n"))
		if s.Requests == 0 || s.OK != 0 || s.Errors.Check != s.Requests || s.StatusCodes["200"] != s.Requests {
			t.Errorf("requests %d ok %d errors %+v codes %v: want every 200 active:false answer failed by the check",
				s.Requests, s.OK, s.Errors, s.StatusCodes)
		}
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
// protocol of mintpool's form-page) and client_credentials -> userinfo,
// whose userinfo answers a client's token with 403 after validating it.
func TestRefopIterations(t *testing.T) {
	base := refopURL(t)
	dir := t.TempDir()
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	t.Setenv("IDPBENCH_PASSWORD", "")
	t.Run("auth_code", func(t *testing.T) {
		s := runRefop(t, "--url", base+"/auth", "--scenario", "auth_code", "--login", "form-page",
			"--token-url", base+"/oauth/token", "--redirect-uri", "http://localhost:9999/auth/callback",
			"--client-id", "web", "--client-secret-file", writeFile(t, dir, "web", "secret\n"),
			"--username", "test-user@localhost", "--password-file", writeFile(t, dir, "pw", "verysecure\n"),
			"--scope", "openid offline_access")
		checkIterations(t, s, "login_authorize", "login_form", "login_submit", "login_callback", "oidc_token")
	})
	t.Run("client_credentials_login/403 fails", func(t *testing.T) {
		// The example answers userinfo for a client's token with 403: under
		// the scenario's one rule (userinfo 2xx with a sub) every iteration
		// fails at oidc_user_info, and the reference OP's S2l cell is N/A.
		s, _ := runRefopStep(t, "--url", base+"/oauth/token", "--scenario", "client_credentials_login",
			"--userinfo-url", base+"/userinfo", "--scope", "openid",
			"--client-id", refopClientID, "--client-secret-file", writeFile(t, dir, "sid1", refopSecret+"\n"))
		tok, ui := s.RequestsByName["oidc_token"], s.RequestsByName["oidc_user_info"]
		if s.Requests == 0 || s.OK != 0 || s.Errors.Non2xx != s.Requests || tok.OK != s.Requests ||
			ui.OK != 0 || ui.StatusCodes["403"] != s.Requests {
			t.Errorf("iterations %d ok %d errors %+v; oidc_token ok %d; oidc_user_info ok %d codes %v: "+
				"want every token ok and every userinfo 403 failed", s.Requests, s.OK, s.Errors, tok.OK, ui.OK, ui.StatusCodes)
		}
	})
}

// TestHydraAuthCode runs the headless login/consent flow against Hydra.
func TestHydraAuthCode(t *testing.T) {
	env := map[string]string{}
	for _, k := range []string{"IDPBENCH_HYDRA_PUBLIC", "IDPBENCH_HYDRA_ADMIN", "IDPBENCH_HYDRA_CLIENT_ID", "IDPBENCH_HYDRA_CLIENT_SECRET_FILE"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			if integration() {
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
		"--product", "hydra", "--url", public+"/oauth2/auth", "--scenario", "auth_code", "--login", "admin-accept",
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

// refopUserTokens logs the demo user in n times through the example's login
// page as the web client (internal/login/formlogin, as mintpool's form-page
// and loadstep's --login form-page do) and returns the access tokens of the
// code exchanges (POST /oauth/token).
func refopUserTokens(t *testing.T, base string, n int) []string {
	t.Helper()
	login, err := formlogin.New(formlogin.Client{AuthURL: base + "/auth", ClientID: refopWebClient,
		RedirectURI: refopRedirectURI, Scope: "openid", PageHop: true})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for i := range n {
		callback, err := login.Login(formlogintest.Do[formlogin.Hop](t.Context()), refopUser, refopPassword)
		if err != nil {
			t.Fatalf("login %d: %v", i, err)
		}
		form := url.Values{"grant_type": {"authorization_code"}, "code": {callback.Query().Get("code")}, "redirect_uri": {refopRedirectURI}}
		body := doRequest(t, http.MethodPost, base+"/oauth/token", form.Encode(),
			map[string]string{"Authorization": basicAuth(refopWebClient, refopWebSecret)}, 200)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
			t.Fatalf("login %d: token response %.200q: %v", i, body, err)
		}
		tokens = append(tokens, tok.AccessToken)
	}
	return tokens
}

// wantField fails the test unless the JSON body's field passes ok.
func wantField(t *testing.T, what string, body []byte, field string, ok func(any) bool) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || !ok(m[field]) {
		t.Fatalf("%s answered %.200s (%v): want a JSON %q the scenario's rule accepts", what, body, err, field)
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

// refopKey loads the service user's private key from IDPBENCH_REFOP_KEY,
// the example's service-key1.pem. zitadel/oidc is not a dependency of this
// module, so the test cannot ask the module system where it is:
// scripts/test.sh asks (go mod download -json of the version the reference
// OP is built from) and passes the path in.
func refopKey(t *testing.T) any {
	t.Helper()
	path := os.Getenv("IDPBENCH_REFOP_KEY")
	if path == "" {
		if integration() {
			t.Fatal("IDPBENCH_INTEGRATION=1 but IDPBENCH_REFOP_KEY is not set: the path of the reference OP's " +
				"example/server/service-key1.pem (scripts/test.sh sets it)")
		}
		t.Skip("IDPBENCH_REFOP_KEY not set (the reference OP's example/server/service-key1.pem)")
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the reference OP's service key (IDPBENCH_REFOP_KEY): %v", err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(pem)
	if err != nil {
		t.Fatalf("IDPBENCH_REFOP_KEY %s: %v", path, err)
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
