package mint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/mint/minttest"
)

// mintpool's session-api against Zitadel's stand-in, provisioned by
// provision zitadel's code, is products/zitadel/zitadeltest's
// TestMintSessionAPI (the stand-in is a product's: this package imports
// none).

// TestZitadelLoginErrorBody: Zitadel's error body is printed as the login
// words it (message and code, the login client's token redacted should
// Zitadel echo it), not as mintpool's HTTPError quotes a body.
func TestZitadelLoginErrorBody(t *testing.T) {
	const pat = "login-client-PAT-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case sessionapi.AuthorizePath:
			http.Redirect(w, r, "/ui/v2/login/login?authRequest=V2_1", http.StatusFound)
		case sessionapi.SessionsPath:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":16,"message":"token %s is invalid"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := Config{Flow: FlowSessionAPI, Issuer: srv.URL, TokenURL: srv.URL + "/oauth/v2/token", AuthURL: srv.URL + sessionapi.AuthorizePath, RedirectURI: "http://localhost:9999/cb",
		ClientID: "web", ClientSecret: "s3cret", ClientAuth: "basic", LoginClient: "123", LoginClientPAT: pat,
		Username: "u%d", Users: 1, Password: "pw-Secret", N: 1, Parallel: 1, Emit: EmitAccessToken, MaxFailures: 1,
		Timeout: 5 * time.Second, Output: filepath.Join(dir, "z.pool")}
	err := Run(context.Background(), cfg, io.Discard, io.Discard)
	if err == nil || strings.Contains(err.Error(), pat) ||
		!strings.Contains(err.Error(), "session-api: CreateSession (POST /v2/sessions) for user u0: HTTP 401: token [redacted] is invalid (code 16)") {
		t.Errorf("error %v", err)
	}
	minttest.AssertEmptyDir(t, dir)
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
