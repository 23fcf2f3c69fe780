package load

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// ccLoginFlow is client_credentials_login (Zitadel's k6
// machine_client_credentials_login): a client_credentials token, then
// userinfo with it.
type ccLoginFlow struct {
	token, userinfo *url.URL
	auth            clientAuth
	scope           string
}

func (f *ccLoginFlow) order() []string { return []string{NameToken, NameUserinfo} }

func (f *ccLoginFlow) run(it *flowIter) {
	form := url.Values{"grant_type": {grantClientCredentials}}
	if f.scope != "" {
		form.Set("scope", f.scope)
	}
	r, ok := it.do(NameToken, f.auth.tokenRequest(f.token, form), want2xx(hasString("access_token")))
	if !ok {
		return
	}
	req := newRequest(http.MethodGet, f.userinfo, "", "")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+jsonString(r.body, "access_token"))
	// schema.CheckCCLogin: userinfo as the userinfo scenario judges it.
	it.do(NameUserinfo, req, want2xx(hasString("sub")))
}

// authCode is what every auth_code login driver shares: the scope and the
// user, and the code exchange (each login, in its own package, makes its
// authorization request and checks its callback).
type authCode struct {
	token    *url.URL
	redirect *url.URL // the client's redirect URI
	auth     clientAuth
	scope    string
	username string // pattern, %d = user index
}

func newAuthCode(c *Config, auth clientAuth) authCode {
	scope := c.Scope
	if scope == "" {
		scope = "openid"
	}
	redirect, _ := url.Parse(c.RedirectURI) // validated
	return authCode{token: c.TokenURL, redirect: redirect, auth: auth, scope: scope, username: c.Username}
}

// exchangeCode trades the code of callback URL loc (checked) for tokens.
func (a *authCode) exchangeCode(it *flowIter, loc *url.URL) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {a.redirect.String()}}
	it.do(NameToken, a.auth.tokenRequest(a.token, form), want2xx(hasString("access_token")))
}

// loginFlow is an auth_code iteration: the login by its protocol
// (internal/login, which mintpool's login flows share), each hop a named
// request, then the code exchange:
//
//	admin-accept (Hydra):  login_authorize (-> ?login_challenge), login_accept (PUT admin),
//	                       login_verifier (-> ?consent_challenge), login_consent (PUT admin),
//	                       login_callback (-> the code), oidc_token
//	form (Keycloak):       login_authorize (the form), login_submit (-> the code), oidc_token
//	form-page (refop):     login_authorize (-> the page), login_form, login_submit,
//	                       login_callback (-> the code), oidc_token
//	session-api (Zitadel): login_authorize (-> ?authRequest), login_session, login_finalize
//	                       (-> {callbackUrl}), oidc_token
//
// A wrong password answers 200 with the form again where the submit wants
// a redirect: a failed check. Hydra's missing cookie shows as
// error=request_forbidden in a redirect, which fails the hop's check.
type loginFlow struct {
	authCode
	login    login.Flow
	password string
}

func (f *loginFlow) order() []string { return append(f.login.Requests(), NameToken) }

func (f *loginFlow) run(it *flowIter) {
	if callback, err := f.login.Login(loginDo(it), it.username(f.username), f.password); err == nil {
		f.exchangeCode(it, callback)
	}
}

// errHopFailed ends a login at a failed hop, recorded as such.
var errHopFailed = errors.New("hop failed")

// loginDo sends a login's hops as the requests they are named, each
// judged by the hop's check (hopClass).
func loginDo(it *flowIter) login.Do {
	return func(name string, req *http.Request, check loginhop.Check) error {
		req.Header.Set("User-Agent", userAgent)
		_, ok := it.do(name, req, func(r *reply) class {
			err := check(&loginhop.Response{Status: r.status, Header: r.header, Body: r.body})
			return hopClass(err, r.status)
		})
		if !ok {
			return errHopFailed
		}
		return nil
	}
}

// hopClass is a login hop's class from its check's verdict err: ok when
// nil; a wrong status outside 2xx is non2xx; anything else the check
// refuses (a 2xx where a redirect was wanted too) a failed check.
func hopClass(err error, status int) class {
	switch {
	case err == nil:
		return classOK
	case loginhop.WrongStatus(err) != nil && (status < 200 || status > 299):
		return classNon2xx
	}
	return classCheck
}
