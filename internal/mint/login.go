package mint

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/idpbench/idpbench/internal/login/adminaccept"
	"github.com/idpbench/idpbench/internal/login/formlogin"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// loginFlow is a browser's login, then the code exchange with client
// auth: admin-accept, Ory Hydra's headless login and consent
// (docs/products/hydra.md; internal/login/adminaccept, which loadstep's
// --login admin-accept shares); form-page, the reference OP's login
// page behind a redirect, then a callback hop (internal/login/formlogin, which
// loadstep's --login form-page shares); and session-api, Zitadel's
// Session API login (zitadel.go). Each login has its own cookie jar:
// Hydra ties the challenges to CSRF cookies (a missing cookie shows as
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
// response: a loginhop.Do for which every hop is alike.
type send func(req *http.Request, check loginhop.Check) error

// anyHop is s as the Do of a login whose hops are H.
func anyHop[H any](s send) loginhop.Do[H] {
	return func(_ H, req *http.Request, check loginhop.Check) error { return s(req, check) }
}

// newLogin builds the login flow cfg.Flow names: admin-accept, form-page
// or session-api.
func newLogin(cfg *Config, tokenURL, authURL string) (*loginFlow, error) {
	switch cfg.Flow {
	case FlowSessionAPI:
		return newZitadelLogin(cfg, tokenURL, authURL)
	case FlowFormPage:
		return newRefopLogin(cfg, tokenURL, authURL)
	}
	return newHydraLogin(cfg, tokenURL, authURL)
}

func newHydraLogin(cfg *Config, tokenURL, authURL string) (*loginFlow, error) {
	login, err := adminaccept.New(adminaccept.Client{AuthURL: authURL, AdminURL: cfg.AdminURL,
		ClientID: cfg.ClientID, RedirectURI: cfg.RedirectURI, Scope: cfg.Scope})
	if err != nil {
		return nil, err
	}
	subject, users := cfg.Subject, cfg.Users
	return newLoginFlow(cfg, tokenURL, func(s send, i int) (*url.URL, error) {
		return login.Login(anyHop[adminaccept.Hop](s), perUser(subject, i, users))
	}), nil
}

func newRefopLogin(cfg *Config, tokenURL, authURL string) (*loginFlow, error) {
	login, err := formlogin.New(formlogin.Client{AuthURL: authURL, ClientID: cfg.ClientID,
		RedirectURI: cfg.RedirectURI, Scope: cfg.Scope, PageHop: true})
	if err != nil {
		return nil, err
	}
	username, users, password := cfg.Username, cfg.Users, cfg.Password
	return newLoginFlow(cfg, tokenURL, func(s send, i int) (*url.URL, error) {
		return login.Login(anyHop[formlogin.Hop](s), perUser(username, i, users), password)
	}), nil
}

func newLoginFlow(cfg *Config, tokenURL string, login func(send, int) (*url.URL, error)) *loginFlow {
	return &loginFlow{name: cfg.Flow, login: login, redirect: cfg.RedirectURI, tokenURL: tokenURL,
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
