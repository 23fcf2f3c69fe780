package load

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/idpbench/idpbench/internal/login/adminaccept"
	"github.com/idpbench/idpbench/internal/login/formlogin"
	"github.com/idpbench/idpbench/internal/login/sessionapi"
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

// hydraLogin is Ory Hydra's headless login (internal/login/adminaccept,
// which mintpool's admin-accept shares), each hop a named request, then
// the code exchange:
//
//	login_authorize  GET  /oauth2/auth            -> 302 ?login_challenge (login CSRF cookie)
//	login_accept     PUT  admin login/accept      -> {redirect_to}
//	login_verifier   GET  redirect_to             -> 302 ?consent_challenge (consent CSRF cookie)
//	login_consent    PUT  admin consent/accept    -> {redirect_to}
//	login_callback   GET  redirect_to             -> 303 redirect_uri?code=&state=
//	oidc_token       POST /oauth2/token           authorization_code
//
// A missing cookie shows as error=request_forbidden in a redirect, which
// fails the hop's check.
type hydraLogin struct {
	authCode
	login *adminaccept.Flow
}

// hydraNames are the request names of adminaccept's hops.
var hydraNames = [adminaccept.Hops]string{adminaccept.Authorize: NameAuthorize, adminaccept.AcceptLogin: NameAccept,
	adminaccept.Verifier: NameVerifier, adminaccept.AcceptConsent: NameConsent, adminaccept.Callback: NameCallback}

func (f *hydraLogin) order() []string { return append(hydraNames[:], NameToken) }

func (f *hydraLogin) run(it *flowIter) {
	if callback, err := f.login.Login(loginHop[adminaccept.Hop](it, hydraNames[:]), it.username(f.username)); err == nil {
		f.exchangeCode(it, callback)
	}
}

// formLogin is a login through the product's HTML form
// (internal/login/formlogin, which mintpool's form-page shares), each hop a named request, then the code exchange:
//
//	Keycloak:  login_authorize (the form), login_submit (-> the code), oidc_token
//	refop:     login_authorize (-> the page), login_form, login_submit,
//	           login_callback (-> the code), oidc_token
//
// A wrong password answers 200 with the form again where the submit wants
// a redirect: a failed check.
type formLogin struct {
	authCode
	login    *formlogin.Flow
	password string
}

// formNames are the request names of formlogin's hops.
var formNames = [...]string{formlogin.Authorize: NameAuthorize, formlogin.Page: NameLoginForm,
	formlogin.Submit: NameSubmit, formlogin.Callback: NameCallback}

func (f *formLogin) order() []string {
	var names []string
	for _, h := range f.login.Hops() {
		names = append(names, formNames[h])
	}
	return append(names, NameToken)
}

func (f *formLogin) run(it *flowIter) {
	if callback, err := f.login.Login(loginHop[formlogin.Hop](it, formNames[:]), it.username(f.username), f.password); err == nil {
		f.exchangeCode(it, callback)
	}
}

// errHopFailed ends a login at a failed hop, recorded as such.
var errHopFailed = errors.New("hop failed")

// loginHop sends the hops of a login (internal/login/adminaccept,
// internal/login/formlogin, internal/login/sessionapi) as the requests
// names[hop], each judged by the hop's check (hopClass).
func loginHop[H ~int](it *flowIter, names []string) loginhop.Do[H] {
	return func(hop H, req *http.Request, check loginhop.Check) error {
		req.Header.Set("User-Agent", userAgent)
		_, ok := it.do(names[hop], req, func(r *reply) class {
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

// zitadelLogin is Zitadel's headless login through its Session API, the
// way a custom login UI does it (internal/login/sessionapi's Flow, which
// mintpool's session-api shares; docs/products/zitadel.md), each hop a
// named request, then the code exchange:
//
//	login_authorize  GET  /oauth/v2/authorize with x-zitadel-login-client
//	                      -> 302 <login UI>?authRequest=V2_<id>
//	login_session    POST /v2/sessions (the user and password checks)
//	                      -> 201 {sessionId, sessionToken}
//	login_finalize   POST /v2/oidc/auth_requests/<id> (the session)
//	                      -> 200 {callbackUrl: redirect_uri?code=&state=}
//	oidc_token       POST /oauth/v2/token authorization_code
//
// The session and finalize calls carry the login client's token.
type zitadelLogin struct {
	authCode
	login    *sessionapi.Flow
	password string
}

// zitadelNames are the request names of sessionapi's hops.
var zitadelNames = [sessionapi.Hops]string{sessionapi.Authorize: NameAuthorize, sessionapi.CreateSession: NameSession,
	sessionapi.CreateCallback: NameFinalize}

func (f *zitadelLogin) order() []string { return append(zitadelNames[:], NameToken) }

func (f *zitadelLogin) run(it *flowIter) {
	if callback, err := f.login.Login(loginHop[sessionapi.Hop](it, zitadelNames[:]), it.username(f.username), f.password); err == nil {
		f.exchangeCode(it, callback)
	}
}
