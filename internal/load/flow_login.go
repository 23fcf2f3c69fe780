package load

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/idpbench/idpbench/internal/formlogin"
	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/products/hydra/adminaccept"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
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

// authCode is what every auth_code login driver shares: the authorization
// request, the callback check and the code exchange.
type authCode struct {
	authorize *url.URL // the authorization endpoint with the fixed parameters
	token     *url.URL
	redirect  *url.URL // the client's redirect URI
	auth      clientAuth
	scope     string
	username  string // pattern, %d = user index
}

func newAuthCode(c *Config, auth clientAuth) authCode {
	scope := c.Scope
	if scope == "" {
		scope = "openid"
	}
	u := *c.URL
	q := u.Query()
	q.Set("client_id", c.ClientID)
	q.Set("response_type", "code")
	q.Set("scope", scope)
	q.Set("redirect_uri", c.RedirectURI)
	u.RawQuery = q.Encode()
	redirect, _ := url.Parse(c.RedirectURI) // validated
	return authCode{authorize: &u, token: c.TokenURL, redirect: redirect, auth: auth, scope: scope, username: c.Username}
}

// authorizeURL is the authorization request of one iteration with its state.
func (a *authCode) authorizeURL(state string) *url.URL {
	u := *a.authorize
	u.RawQuery += "&state=" + url.QueryEscape(state)
	return &u
}

// newState is an iteration's state: 26 random characters (Hydra wants at
// least 8).
func newState() string { return rand.Text() }

// isCallback reports whether loc goes to the client's redirect URI.
func (a *authCode) isCallback(loc *url.URL) bool {
	return loc.Scheme == a.redirect.Scheme && loc.Host == a.redirect.Host && loc.Path == a.redirect.Path
}

// callbackOK is the callback check: a redirect to the client's redirect
// URI with a code, the iteration's state and no error= (an IdP redirects
// its failures, such as Hydra's error=request_forbidden for a missing CSRF
// cookie, to the client).
func (a *authCode) callbackOK(state string) func(*url.URL) bool {
	return func(loc *url.URL) bool {
		q := loc.Query()
		return a.isCallback(loc) && q.Get("error") == "" && q.Get("code") != "" && q.Get("state") == state
	}
}

// exchangeCode trades the code of callback URL loc (checked) for tokens.
func (a *authCode) exchangeCode(it *flowIter, loc *url.URL) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {a.redirect.String()}}
	it.do(NameToken, a.auth.tokenRequest(a.token, form), want2xx(hasString("access_token")))
}

// hydraLogin is Ory Hydra's headless login (products/hydra/adminaccept,
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
// (internal/formlogin, which mintpool's form-page shares), each hop a named request, then the code exchange:
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

// loginHop sends the hops of a login (products/hydra/adminaccept,
// internal/formlogin) as the requests names[hop], each judged by the
// hop's check (hopClass).
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
// way a custom login UI does it (docs/products/zitadel.md; Zitadel's
// guide "Support for the OpenID Connect (OIDC) Standard in a Custom Login
// UI", https://zitadel.com/docs/guides/integrate/login-ui/oidc-standard):
//
//	login_authorize  GET  /oauth/v2/authorize with x-zitadel-login-client:
//	                      <login client's user id> -> 302 <login UI>?authRequest=V2_<id>
//	login_session    POST /v2/sessions {checks: {user: {loginName},
//	                      password: {password}}} -> 201 {sessionId, sessionToken}
//	login_finalize   POST /v2/oidc/auth_requests/<id> {session: {sessionId,
//	                      sessionToken}} -> 200 {callbackUrl: redirect_uri?code=&state=}
//	oidc_token       POST /oauth/v2/token authorization_code
//
// The session and finalize calls carry the login client's token (a PAT
// of a machine user with the IAM_LOGIN_CLIENT role). The header's value is
// that user's id: Zitadel then makes a V2 auth request whatever the
// application's login version (internal/api/oidc/auth_request.go,
// CreateAuthRequest, in the Zitadel source). The header name and the two
// bodies are products/zitadel/zitadelapi's, whose tests hold them to
// Zitadel's written API shapes, themselves checked against Zitadel's
// definitions (@zitadel/proto; products/zitadel/zitadeldefs).
type zitadelLogin struct {
	authCode
	api         string // the API base URL, without a trailing slash
	loginClient string // the login client's user id
	bearer      string // "Bearer " + its token
	password    string
}

func (f *zitadelLogin) order() []string {
	return []string{NameAuthorize, NameSession, NameFinalize, NameToken}
}

func (f *zitadelLogin) run(it *flowIter) {
	state := newState()
	auth := newRequest(http.MethodGet, f.authorizeURL(state), "", "")
	auth.Header.Set(zitadelapi.LoginClientHeader, f.loginClient)
	r, ok := it.do(NameAuthorize, auth, wantRedirect(hasQuery("authRequest")))
	if !ok {
		return
	}
	loc, _ := r.location() // parsed by the redirect check
	id := loc.Query().Get("authRequest")

	var session zitadelapi.Session
	checks := zitadelapi.NewSessionChecks(it.username(f.username), f.password)
	r, ok = it.do(NameSession, f.apiRequest(zitadelapi.SessionsPath, checks), want2xx(func(body []byte) bool {
		return json.Unmarshal(body, &session) == nil && session.ID != "" && session.Token != ""
	}))
	if !ok || r == nil {
		return
	}

	var callback *url.URL
	check := f.callbackOK(state)
	_, ok = it.do(NameFinalize, f.apiRequest(zitadelapi.CallbackPath(id),
		zitadelapi.CallbackRequest{Session: session}), want2xx(func(body []byte) bool {
		var err error
		callback, err = url.Parse(jsonString(body, "callbackUrl"))
		return err == nil && check(callback)
	}))
	if ok {
		f.exchangeCode(it, callback)
	}
}

// apiRequest is a JSON POST to the Session API with the login client's token.
func (f *zitadelLogin) apiRequest(path string, body any) *http.Request {
	b, err := json.Marshal(body)
	target, perr := url.Parse(f.api + path)
	if err != nil || perr != nil {
		panic("zitadel login: " + path) // cannot happen: fixed types, a validated URL
	}
	req := newRequest(http.MethodPost, target, string(b), "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", f.bearer)
	return req
}
