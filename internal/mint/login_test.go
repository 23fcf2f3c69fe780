package mint

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
	"github.com/idpbench/idpbench/internal/mint/minttest"
)

// loginFake starts a login flow's fake and returns the run's config
// against it (12 credentials over 3 users) and how many logins of each
// user the fake has completed. broken: the fake's own failure (Hydra's
// cookies never come back).
type loginFake func(t *testing.T, out string, broken bool) (Config, func() map[string]int)

var loginFakes = map[string]loginFake{
	FlowAdminAccept: func(t *testing.T, out string, badCookies bool) (Config, func() map[string]int) {
		h := newFakeHydra(t, badCookies)
		return hydraConfig(h, out), func() map[string]int { return h.subjects }
	},
	FlowFormPage: func(t *testing.T, out string, _ bool) (Config, func() map[string]int) {
		f := formlogintest.NewOP(t, true)
		return refopConfig(f, out), f.Logins
	},
	// Keycloak's shape, with its consent asked once a user and a login
	// form whose user input is its own.
	FlowForm: func(t *testing.T, out string, _ bool) (Config, func() map[string]int) {
		f := formlogintest.NewOP(t, false)
		f.Consent, f.UserInput = formlogintest.ConsentOnce, [2]string{"email", "email"}
		cfg := refopConfig(f, out)
		cfg.Flow, cfg.LoginForm = FlowForm, login.FormOptions{Consent: true}
		return cfg, f.Logins
	},
}

func refopConfig(f *formlogintest.OP, out string) Config {
	cfg := baseConfig(f.Server, out)
	cfg.Flow, cfg.TokenURL, cfg.Issuer = FlowFormPage, "", f.Server.URL
	cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth = formlogintest.ClientID, formlogintest.ClientSecret, "basic"
	cfg.RedirectURI, cfg.Username, cfg.Password, cfg.Users = formlogintest.RedirectURI, "user%d", formlogintest.Password, 3
	cfg.Scope, cfg.N = "openid offline_access", 12
	return cfg
}

func TestLoginFlows(t *testing.T) {
	tests := []struct {
		flow   string
		prefix map[string]string // of the credentials, by --emit
	}{
		{FlowAdminAccept, map[string]string{EmitAccessToken: "hat-user", EmitRefreshToken: "hrt-"}},
		{FlowFormPage, map[string]string{EmitAccessToken: "at-user", EmitRefreshToken: "rt-user"}},
		{FlowForm, map[string]string{EmitAccessToken: "at-user", EmitRefreshToken: "rt-user"}},
	}
	for _, tt := range tests {
		for _, emit := range []string{EmitAccessToken, EmitRefreshToken} {
			t.Run(tt.flow+"/"+emit, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "p.pool")
				cfg, logins := loginFakes[tt.flow](t, out, false)
				cfg.Emit = emit
				if err := Run(context.Background(), cfg, io.Discard, io.Discard); err != nil {
					t.Fatalf("Run: %v", err)
				}
				p := minttest.ReadPool(t, out)
				if len(p.Creds) != 12 || p.Header["kind"] != emit || p.Header["flow"] != tt.flow {
					t.Fatalf("pool %v with %d credentials", p.Header, len(p.Creds))
				}
				if want := map[string]int{"user0": 4, "user1": 4, "user2": 4}; fmt.Sprint(logins()) != fmt.Sprint(want) {
					t.Errorf("logins per user %v, want %v", logins(), want)
				}
				for _, c := range p.Creds {
					if !strings.HasPrefix(c, tt.prefix[emit]) {
						t.Errorf("credential %q, want prefix %q", c, tt.prefix[emit])
					}
				}
			})
		}
	}
}

func TestLoginFlowErrors(t *testing.T) {
	wrongSecret := func(c *Config) { c.ClientSecret = "not-the-secret" }
	tests := []struct {
		flow, name string
		broken     bool // admin-accept: the fake's cookies never come back
		mod        func(*Config)
		want       []string
	}{
		{FlowAdminAccept, "cookie missing", true, nil, []string{"request_forbidden", "No CSRF value available"}},
		{FlowAdminAccept, "no refresh token without offline_access", false, func(c *Config) { c.Scope, c.Emit = "openid", EmitRefreshToken },
			[]string{"no refresh_token", "offline_access"}},
		{FlowAdminAccept, "unregistered redirect", false, func(c *Config) { c.RedirectURI = "http://127.0.0.1/other" },
			[]string{"HTTP 400", "want a redirect"}},
		{FlowFormPage, "wrong password", false, func(c *Config) { c.Password = "not-it" },
			[]string{"POST", "/login/username", "want a redirect", "HTTP 200"}},
		{FlowFormPage, "unregistered redirect", false, func(c *Config) { c.RedirectURI = "http://127.0.0.1/other" }, []string{"HTTP 400"}},
		{FlowAdminAccept, "wrong client secret", false, wrongSecret, []string{"code exchange", "HTTP 401", "invalid_client"}},
		{FlowFormPage, "wrong client secret", false, wrongSecret, []string{"code exchange", "HTTP 401", "invalid_client"}},
	}
	for _, tt := range tests {
		t.Run(tt.flow+"/"+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, _ := loginFakes[tt.flow](t, filepath.Join(dir, "p.pool"), tt.broken)
			cfg.MaxFailures, cfg.N = 2, 4
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			err := Run(context.Background(), cfg, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			for _, w := range append(tt.want, tt.flow) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, leak := range []string{"challenge=", "code=", "session_code=", cfg.Password} {
				if leak != "" && strings.Contains(err.Error(), leak) {
					t.Errorf("error leaks %q: %q", leak, err)
				}
			}
			minttest.AssertEmptyDir(t, dir)
		})
	}
}
