package zitadeltest

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/mint"
	"github.com/idpbench/idpbench/internal/mint/minttest"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
)

// mintpool's Zitadel flows (internal/mint) against this stand-in,
// provisioned by provision zitadel's code (zitadelapi.Setup): the Session
// API login (internal/login/sessionapi) with its code exchange, its
// refusals, and the key files the jwt flows sign with. They live here, with
// the stand-in, because internal/ imports no product.

// provisioned is what provision zitadel left for the mint flow.
type provisioned struct {
	fake    *Fake
	sum     zitadelapi.Summary
	pat     string
	secret  string
	userPwd string
	dir     string
}

// provision runs the real setup against the recorded Zitadel.
func provision(t *testing.T, loginSuffix string) *provisioned {
	t.Helper()
	f := NewFake(t)
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

func (p *provisioned) config(out string) mint.Config {
	return mint.Config{
		Flow: mint.FlowSessionAPI, Issuer: p.fake.URL, RedirectURI: p.sum.Web.RedirectURI,
		ClientID: p.sum.Web.ClientID, ClientSecret: p.secret, ClientAuth: "basic", Scope: mint.DefaultScope(mint.FlowSessionAPI),
		LoginClient: p.sum.LoginClient.UserID, LoginClientPAT: p.pat,
		Username: p.sum.Users.LoginNamePattern, Users: 3, Password: p.userPwd,
		TTL: time.Hour, N: 9, Parallel: 3, Emit: mint.EmitRefreshToken, MaxFailures: 3,
		Timeout: 5 * time.Second, Product: "zitadel", Output: out,
	}
}

// TestMintSessionAPI provisions with provision zitadel's code and mints through
// the Session API login against the same recorded Zitadel.
func TestMintSessionAPI(t *testing.T) {
	for _, tt := range []struct {
		emit, suffix, prefix string
	}{
		{mint.EmitRefreshToken, "", "zrt-bench-user"},
		{mint.EmitAccessToken, "@zitadel.localhost", "zat-bench-user"},
	} {
		t.Run(tt.emit, func(t *testing.T) {
			p := provision(t, tt.suffix)
			out := filepath.Join(t.TempDir(), "z.pool")
			cfg := p.config(out)
			cfg.Emit = tt.emit
			var stderr minttest.SyncBuf
			if err := mint.Run(context.Background(), cfg, io.Discard, &stderr); err != nil {
				t.Fatalf("mint.Run: %v\n%s", err, stderr.String())
			}
			pl := minttest.ReadPool(t, out)
			if len(pl.Creds) != 9 || pl.Header["kind"] != tt.emit || pl.Header["flow"] != mint.FlowSessionAPI {
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

// TestMintKeyFiles: the key files provision zitadel wrote are what
// mintpool's jwt flows sign with (Zitadel's JSON key format): the
// machine user's key signs jwt-bearer grants as that user, the API app's
// client assertions as its client, each under its key's id.
func TestMintKeyFiles(t *testing.T) {
	p := provision(t, "")
	for _, tt := range []struct {
		flow, file, kid, iss string
	}{
		{mint.FlowJWTBearer, p.sum.M2M.KeyFile, p.sum.M2M.KeyID, p.sum.M2M.UserID},
		{mint.FlowClientAssertion, p.sum.APIApp.KeyFile, p.sum.APIApp.KeyID, p.sum.APIApp.ClientID},
	} {
		out := filepath.Join(t.TempDir(), "a.pool")
		cfg := mint.Config{Flow: tt.flow, KeyFile: tt.file, Audience: p.fake.URL, TTL: time.Hour, N: 2, Parallel: 1,
			Users: 1, Emit: mint.EmitAccessToken, ClientAuth: "basic", MaxFailures: 1, Timeout: time.Second, Output: out}
		if err := mint.Run(context.Background(), cfg, io.Discard, io.Discard); err != nil {
			t.Fatalf("%s with %s: %v", tt.flow, tt.file, err)
		}
		pl := minttest.ReadPool(t, out)
		if len(pl.Creds) != 2 {
			t.Fatalf("%s: %d assertions", tt.flow, len(pl.Creds))
		}
		var claims jwt.RegisteredClaims
		tok, _, err := jwt.NewParser().ParseUnverified(pl.Creds[0], &claims)
		if err != nil || tok.Header["kid"] != tt.kid || claims.Issuer != tt.iss || claims.Subject != tt.iss {
			t.Errorf("%s: kid %v, iss %q, sub %q (%v); want kid %s, iss and sub %s", tt.flow, tok.Header["kid"], claims.Issuer, claims.Subject, err, tt.kid, tt.iss)
		}
	}
}

func TestMintSessionAPIErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(p *provisioned, c *mint.Config)
		want []string
	}{
		{"wrong password", func(p *provisioned, c *mint.Config) { c.Password = "Wrong-Passw0rd!" },
			[]string{"CreateSession (POST /v2/sessions)", "HTTP 400", "Errors.User.Password.Invalid", "user bench-user"}},
		{"unknown login name", func(p *provisioned, c *mint.Config) { c.Username = "nobody%d" },
			[]string{"user nobody", "CreateSession", "HTTP 404"}},
		{"login client PAT refused", func(p *provisioned, c *mint.Config) { c.LoginClientPAT = "not-a-pat" },
			[]string{"CreateSession", "HTTP 401", "Errors.Token.Invalid"}},
		{"header names another user", func(p *provisioned, c *mint.Config) { c.LoginClient = p.sum.M2M.UserID },
			[]string{"CreateCallback (POST /v2/oidc/auth_requests/", "HTTP 403", "WrongLoginClient"}},
		{"unregistered redirect", func(p *provisioned, c *mint.Config) { c.RedirectURI = "http://localhost:9999/other" },
			[]string{"Authorize (GET ", "/oauth/v2/authorize)", "HTTP 400", "redirect_uri"}},
		{"wrong web secret", func(p *provisioned, c *mint.Config) { c.ClientSecret = "not-the-secret" },
			[]string{"code exchange", "HTTP 401", "invalid_client"}},
		{"no offline_access", func(p *provisioned, c *mint.Config) { c.Scope = "openid" },
			[]string{"no refresh_token", "offline_access"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := provision(t, "")
			dir := t.TempDir()
			cfg := p.config(filepath.Join(dir, "z.pool"))
			cfg.N = 4
			tt.mod(p, &cfg)
			err := mint.Run(context.Background(), cfg, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("mint.Run succeeded")
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
			minttest.AssertEmptyDir(t, dir)
		})
	}
}
