package mint

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
)

// zitadelFlow logs human users in through Zitadel's Session API, as a custom
// login UI does (docs/products/zitadel.md; products/zitadel/zitadelapi/login.go):
//
//  1. GET authorize with x-zitadel-login-client  -> 302 ...?authRequest=V2_...
//  2. POST /v2/sessions (user + password checks)  -> session id and token
//  3. POST /v2/oidc/auth_requests/V2_...          -> callback URL with the code
//  4. POST token (authorization_code, client_secret_basic)
//
// Steps 2 and 3 authenticate with the login client's PAT; the login client
// is a machine user with IAM_LOGIN_CLIENT, named by its user id in step 1.
type zitadelFlow struct {
	base        string // the issuer: base of Zitadel's v2 API
	authURL     string
	tokenURL    string
	pat         string // login client PAT: a secret
	loginClient string // login client user id
	clientID    string
	secret      string // web app client secret
	redirect    string
	scope       string
	username    string
	users       int
	password    string
	emit        string
}

func newZitadelLogin(cfg *Config, tokenURL, authURL string) *zitadelFlow {
	return &zitadelFlow{
		base: strings.TrimRight(cfg.Issuer, "/"), authURL: authURL, tokenURL: tokenURL,
		pat: cfg.LoginClientPAT, loginClient: cfg.LoginClient,
		clientID: cfg.ClientID, secret: cfg.ClientSecret, redirect: cfg.RedirectURI, scope: cfg.Scope,
		username: cfg.Username, users: cfg.Users, password: cfg.Password, emit: cfg.Emit,
	}
}

func (f *zitadelFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	c := zitadelapi.New(f.base, f.pat, w.hc)
	state := rand.Text()
	id, err := c.Authorize(ctx, zitadelapi.AuthorizeRequest{Endpoint: f.authURL, ClientID: f.clientID,
		RedirectURI: f.redirect, Scope: f.scope, State: state, LoginClient: f.loginClient})
	if err != nil {
		return credential{}, fmt.Errorf("session-api: %w", err)
	}
	user := perUser(f.username, i, f.users)
	s, err := c.CreateSession(ctx, user, f.password)
	if err != nil {
		return credential{}, fmt.Errorf("session-api: user %s: %w", user, err)
	}
	cb, err := c.CreateCallback(ctx, id, s)
	if err != nil {
		return credential{}, fmt.Errorf("session-api: %w", err)
	}
	code, err := zitadelapi.CallbackCode(cb, f.redirect, state)
	if err != nil {
		return credential{}, fmt.Errorf("session-api: CreateCallback: %w", err)
	}
	t, err := c.ExchangeCode(ctx, zitadelapi.CodeExchange{TokenURL: f.tokenURL, ClientID: f.clientID,
		ClientSecret: f.secret, Code: code, RedirectURI: f.redirect})
	if err != nil {
		return credential{}, fmt.Errorf("session-api: code exchange: %w", err)
	}
	tr := tokenResponse{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, IDToken: t.IDToken, ExpiresIn: seconds(t.ExpiresIn)}
	return tr.pick(f.emit, time.Now())
}

// validateZitadelLogin checks what the session-api flow needs beyond the
// token endpoint client.
func (c *Config) validateZitadelLogin() error {
	switch {
	case c.Issuer == "":
		return cli.Usagef("--issuer: required for flow session-api (the base of Zitadel's v2 API)")
	case c.LoginClient == "":
		return cli.Usagef("--login-client: required for flow session-api (user id of the IAM_LOGIN_CLIENT machine user)")
	case c.LoginClientPAT == "":
		return cli.Usagef("--login-client-pat-file (or env IDPBENCH_LOGIN_CLIENT_PAT): required for flow session-api")
	case c.Username == "":
		return cli.Usagef("--username: required for flow session-api")
	case c.Password == "":
		return cli.Usagef("--password-file (or env IDPBENCH_PASSWORD): required for flow session-api")
	case c.ClientAuth != "basic":
		return cli.Usagef("--client-auth: flow session-api uses basic (the web app's auth method), got %q", c.ClientAuth)
	}
	return nil
}
