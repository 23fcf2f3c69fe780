package mint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
	"github.com/idpbench/idpbench/products/zitadel/zitadeltest"
)

// provisioned is what provision zitadel left for the mint flow.
type provisioned struct {
	fake    *zitadeltest.Fake
	sum     zitadelapi.Summary
	pat     string
	secret  string
	userPwd string
	dir     string
}

// provision runs the real setup against the recorded Zitadel.
func provision(t *testing.T, loginSuffix string) *provisioned {
	t.Helper()
	f := zitadeltest.NewFake(t)
	f.LoginSuffix = loginSuffix
	dir := t.TempDir()
	var out strings.Builder
	err := zitadelapi.Setup(context.Background(), zitadelapi.SetupConfig{
		Issuer: f.URL, PAT: f.AdminPAT, OutDir: dir, Prefix: "idpbench", Users: 3, Username: "bench-user%d",
		RedirectURI: "http://localhost:9999/cb", Parallel: 2, Timeout: 10 * time.Second,
		GateInterval: time.Millisecond, RequestTimeout: 5 * time.Second,
	}, &out, io.Discard)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	p := &provisioned{fake: f, dir: dir}
	if err := json.Unmarshal([]byte(out.String()), &p.sum); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		s, err := cli.ReadSecret("x", filepath.Join(dir, name), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	p.pat, p.secret, p.userPwd = read(zitadelapi.FileLoginClient), read(zitadelapi.FileWebSecret), read(zitadelapi.FileUserPassword)
	return p
}

func (p *provisioned) config(out string) Config {
	return Config{
		Flow: FlowSessionAPI, Issuer: p.fake.URL, RedirectURI: p.sum.Web.RedirectURI,
		ClientID: p.sum.Web.ClientID, ClientSecret: p.secret, ClientAuth: "basic", Scope: DefaultScope(FlowSessionAPI),
		LoginClient: p.sum.LoginClient.UserID, LoginClientPAT: p.pat,
		Username: p.sum.Users.LoginNamePattern, Users: 3, Password: p.userPwd,
		TTL: time.Hour, N: 9, Parallel: 3, Emit: EmitRefreshToken, MaxFailures: 3,
		Timeout: 5 * time.Second, Product: "zitadel", Output: out,
	}
}

// TestZitadelLogin provisions with provision zitadel's code and mints through
// the Session API login against the same recorded Zitadel.
func TestZitadelLogin(t *testing.T) {
	for _, tt := range []struct {
		emit, suffix, prefix string
	}{
		{EmitRefreshToken, "", "zrt-bench-user"},
		{EmitAccessToken, "@zitadel.localhost", "zat-bench-user"},
	} {
		t.Run(tt.emit, func(t *testing.T) {
			p := provision(t, tt.suffix)
			out := filepath.Join(t.TempDir(), "z.pool")
			cfg := p.config(out)
			cfg.Emit = tt.emit
			var stderr syncBuf
			if err := Run(context.Background(), cfg, io.Discard, &stderr); err != nil {
				t.Fatalf("Run: %v\n%s", err, stderr.String())
			}
			pl := readPool(t, out)
			if len(pl.Creds) != 9 || pl.Header["kind"] != tt.emit || pl.Header["flow"] != FlowSessionAPI {
				t.Fatalf("pool %v with %d credentials", pl.Header, len(pl.Creds))
			}
			for _, c := range pl.Creds {
				if !strings.HasPrefix(c, tt.prefix) {
					t.Errorf("credential %q, want prefix %q", c, tt.prefix)
				}
			}
			for i := range 3 {
				if n := p.fake.Logins("bench-user" + string(rune('0'+i))); n != 3 {
					t.Errorf("bench-user%d logged in %d times, want 3", i, n)
				}
			}
			if n := p.fake.Calls("CreateSession"); n != 9 {
				t.Errorf("%d sessions, want 9", n)
			}
			for _, s := range []string{p.pat, p.secret, p.userPwd} {
				if strings.Contains(stderr.String(), s) {
					t.Errorf("secret in stderr: %s", stderr.String())
				}
			}
		})
	}
}

// TestZitadelKeyFiles: the key files provision zitadel wrote are what the jwt
// flows read (Zitadel's JSON key format).
func TestZitadelKeyFiles(t *testing.T) {
	p := provision(t, "")
	m2m, err := loadKey(p.sum.M2M.KeyFile)
	if err != nil || m2m.userID != p.sum.M2M.UserID || m2m.kid != p.sum.M2M.KeyID {
		t.Errorf("m2m key: %+v, %v", m2m, err)
	}
	app, err := loadKey(p.sum.APIApp.KeyFile)
	if err != nil || app.clientID != p.sum.APIApp.ClientID || app.kid != p.sum.APIApp.KeyID {
		t.Errorf("app key: %+v, %v", app, err)
	}
	out := filepath.Join(t.TempDir(), "a.pool")
	cfg := Config{Flow: FlowJWTBearer, KeyFile: p.sum.M2M.KeyFile, Audience: p.fake.URL, TTL: time.Hour, N: 2, Parallel: 1,
		Users: 1, Emit: EmitAccessToken, ClientAuth: "basic", MaxFailures: 1, Timeout: time.Second, Output: out}
	if err := Run(context.Background(), cfg, io.Discard, io.Discard); err != nil {
		t.Fatalf("jwt-bearer with the m2m key: %v", err)
	}
	if pl := readPool(t, out); len(pl.Creds) != 2 {
		t.Errorf("%d assertions", len(pl.Creds))
	}
}

func TestZitadelLoginErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(p *provisioned, c *Config)
		want []string
	}{
		{"wrong password", func(p *provisioned, c *Config) { c.Password = "Wrong-Passw0rd!" },
			[]string{"CreateSession (POST /v2/sessions)", "HTTP 400", "Errors.User.Password.Invalid", "user bench-user"}},
		{"unknown login name", func(p *provisioned, c *Config) { c.Username = "nobody%d" },
			[]string{"user nobody", "CreateSession", "HTTP 404"}},
		{"login client PAT refused", func(p *provisioned, c *Config) { c.LoginClientPAT = "not-a-pat" },
			[]string{"CreateSession", "HTTP 401", "Errors.Token.Invalid"}},
		{"header names another user", func(p *provisioned, c *Config) { c.LoginClient = p.sum.M2M.UserID },
			[]string{"CreateCallback (POST /v2/oidc/auth_requests/", "HTTP 403", "WrongLoginClient"}},
		{"unregistered redirect", func(p *provisioned, c *Config) { c.RedirectURI = "http://localhost:9999/other" },
			[]string{"Authorize (GET ", "/oauth/v2/authorize)", "HTTP 400", "redirect_uri"}},
		{"wrong web secret", func(p *provisioned, c *Config) { c.ClientSecret = "not-the-secret" },
			[]string{"code exchange", "HTTP 401", "invalid_client"}},
		{"no offline_access", func(p *provisioned, c *Config) { c.Scope = "openid" },
			[]string{"no refresh_token", "offline_access"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := provision(t, "")
			dir := t.TempDir()
			cfg := p.config(filepath.Join(dir, "z.pool"))
			cfg.N = 4
			tt.mod(p, &cfg)
			err := Run(context.Background(), cfg, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, s := range []string{p.pat, p.secret, p.userPwd, cfg.Password, cfg.LoginClientPAT, cfg.ClientSecret, "code=", "authRequest="} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q shows %q", err, s)
				}
			}
			assertEmptyDir(t, dir)
		})
	}
}

// TestZitadelLoginErrorBody: Zitadel's error body is printed as the login
// words it (message and code, the login client's token redacted should
// Zitadel echo it), not as mintpool's HTTPError quotes a body.
func TestZitadelLoginErrorBody(t *testing.T) {
	const pat = "login-client-PAT-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case zitadelapi.AuthorizePath:
			http.Redirect(w, r, "/ui/v2/login/login?authRequest=V2_1", http.StatusFound)
		case zitadelapi.SessionsPath:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":16,"message":"token %s is invalid"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := Config{Flow: FlowSessionAPI, Issuer: srv.URL, TokenURL: srv.URL + "/oauth/v2/token", AuthURL: srv.URL + zitadelapi.AuthorizePath, RedirectURI: "http://localhost:9999/cb",
		ClientID: "web", ClientSecret: "s3cret", ClientAuth: "basic", LoginClient: "123", LoginClientPAT: pat,
		Username: "u%d", Users: 1, Password: "pw-Secret", N: 1, Parallel: 1, Emit: EmitAccessToken, MaxFailures: 1,
		Timeout: 5 * time.Second, Output: filepath.Join(dir, "z.pool")}
	err := Run(context.Background(), cfg, io.Discard, io.Discard)
	if err == nil || strings.Contains(err.Error(), pat) ||
		!strings.Contains(err.Error(), "session-api: CreateSession (POST /v2/sessions) for user u0: HTTP 401: token [redacted] is invalid (code 16)") {
		t.Errorf("error %v", err)
	}
	assertEmptyDir(t, dir)
}

func TestZitadelLoginConfig(t *testing.T) {
	ok := Config{Flow: FlowSessionAPI, Issuer: "http://localhost:8080", RedirectURI: "http://localhost:9999/cb",
		ClientID: "web", ClientSecret: "s", ClientAuth: "basic", LoginClient: "123", LoginClientPAT: "pat",
		Username: "u%d", Users: 2, Password: "pw", N: 1, Parallel: 1, Emit: EmitRefreshToken, MaxFailures: 1, Timeout: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid: %v", err)
	}
	if DefaultScope(FlowSessionAPI) != "openid offline_access" {
		t.Errorf("default scope %q", DefaultScope(FlowSessionAPI))
	}
	for _, tt := range []struct {
		flag string
		mod  func(c *Config)
	}{
		{"--issuer", func(c *Config) { c.Issuer = "" }},
		{"--login-client", func(c *Config) { c.LoginClient = "" }},
		{"--login-client-pat-file", func(c *Config) { c.LoginClientPAT = "" }},
		{"--username", func(c *Config) { c.Username = "" }},
		{"--password-file", func(c *Config) { c.Password = "" }},
		{"--client-auth", func(c *Config) { c.ClientAuth = "post" }},
		{"--client-id", func(c *Config) { c.ClientID = "" }},
		{"--client-secret-file", func(c *Config) { c.ClientSecret = "" }},
		{"--redirect-uri", func(c *Config) { c.RedirectURI = "cb" }},
	} {
		c := ok
		tt.mod(&c)
		err := c.Validate()
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), tt.flag) {
			t.Errorf("%s: %v", tt.flag, err)
		}
	}
}
