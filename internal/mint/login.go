package mint

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// loginFlow is a browser's login by its protocol (internal/login, which
// loadstep's --login shares), then the code exchange with client auth:
// admin-accept, Ory Hydra's headless login and consent
// (docs/products/hydra.md); form, the authorization response is the login
// form (Keycloak's theme); form-page, a login page behind a redirect, then
// a callback hop (the reference OP's, Spring's, node oidc-provider's);
// and session-api, Zitadel's Session API login (the login client's PAT,
// zitadel.go). Each login has its own cookie jar: Hydra ties the
// challenges to CSRF cookies (a missing cookie shows as
// error=request_forbidden in the callback's redirect).
type loginFlow struct {
	name     string                                // the flow's name, in its errors
	login    func(s send, i int) (*url.URL, error) // logs user i in: the callback URL, checked
	redirect string
	tokenURL string
	auth     clientAuth
	emit     string
}

// send sends a request of a login and returns check's verdict on the
// response: a login.Do for which every request is alike.
type send func(req *http.Request, check loginhop.Check) error

// newLogin builds the login flow cfg.Flow names (a login protocol's name:
// admin-accept, form, form-page or session-api).
func newLogin(cfg *Config, tokenURL, authURL string) (*loginFlow, error) {
	c := login.Config{AuthURL: authURL, ClientID: cfg.ClientID, RedirectURI: cfg.RedirectURI, Scope: cfg.Scope, Form: cfg.LoginForm}
	user := cfg.Username
	switch cfg.Flow {
	case FlowAdminAccept:
		c.AdminURL, user = cfg.AdminURL, cfg.Subject
	case FlowSessionAPI:
		c.AdminURL, c.LoginClient, c.LoginClientToken = cfg.Issuer, cfg.LoginClient, cfg.LoginClientPAT // the Session API is below the issuer
	}
	fl, err := login.New(cfg.Flow, c)
	if err != nil {
		return nil, err
	}
	users, password := cfg.Users, cfg.Password
	return newLoginFlow(cfg, tokenURL, func(s send, i int) (*url.URL, error) {
		return fl.Login(func(_ string, req *http.Request, check loginhop.Check) error { return s(req, check) },
			perUser(user, i, users), password)
	}), nil
}

func newLoginFlow(cfg *Config, tokenURL string, logIn func(send, int) (*url.URL, error)) *loginFlow {
	return &loginFlow{name: cfg.Flow, login: logIn, redirect: cfg.RedirectURI, tokenURL: tokenURL,
		auth: newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth), emit: cfg.Emit}
}

func (f *loginFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return credential{}, err
	}
	hc := *w.hc // shares the worker's transport (keep-alive), own cookie jar
	hc.Jar = jar
	callback, err := f.login(f.send(ctx, w, &hc), i)
	if err != nil {
		return credential{}, err
	}
	form := url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {callback.Query().Get("code")},
		"redirect_uri": {f.redirect},
	}
	tr, err := w.postToken(ctx, w.hc, f.tokenURL, f.auth.encode(form), f.auth)
	if err != nil {
		return credential{}, fmt.Errorf("%s: code exchange: %w", f.name, err)
	}
	return tr.pick(f.emit, time.Now())
}

// send sends the login's requests with hc, and words a failure as
// mintpool's errors do: a wrong status as an HTTPError with the server's
// OAuth error, if any (a wrong password at the reference OP: the form
// again, HTTP 200 where a redirect was wanted), unless the login worded
// what the server said itself (the error's Detail: Zitadel's error body,
// its message and code).
func (f *loginFlow) send(ctx context.Context, w *worker, hc *http.Client) send {
	return func(req *http.Request, check loginhop.Check) error {
		req = req.WithContext(ctx)
		resp, err := w.do(hc, req)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		err = check(&loginhop.Response{Status: resp.StatusCode, Header: resp.Header, Body: w.buf.Bytes()})
		if err == nil {
			return nil
		}
		if e := loginhop.WrongStatus(err); e != nil && e.Detail == "" {
			he := newHTTPError(req, e.Status, w.buf.Bytes())
			he.Op = f.name + ": " + e.Request()
			return he
		}
		return fmt.Errorf("%s: %w", f.name, err)
	}
}
