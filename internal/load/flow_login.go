package load

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/idpbench/idpbench/internal/hydralogin"
	"github.com/idpbench/idpbench/internal/zitadel"
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

// exchange trades the code of a passed callback for tokens.
func (a *authCode) exchange(it *flowIter, callback *reply) {
	loc, _ := callback.location() // parsed by the callback check
	a.exchangeCode(it, loc)
}

// exchangeCode trades the code of callback URL loc (checked) for tokens.
func (a *authCode) exchangeCode(it *flowIter, loc *url.URL) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {a.redirect.String()}}
	it.do(NameToken, a.auth.tokenRequest(a.token, form), want2xx(hasString("access_token")))
}

// hydraLogin is Ory Hydra's headless login (internal/hydralogin, which
// mintpool's hydra-login shares), each hop a named request, then the
// code exchange:
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
	login *hydralogin.Flow
}

// hydraNames are the request names of hydralogin's hops.
var hydraNames = [hydralogin.Hops]string{hydralogin.Authorize: NameAuthorize, hydralogin.AcceptLogin: NameAccept,
	hydralogin.Verifier: NameVerifier, hydralogin.AcceptConsent: NameConsent, hydralogin.Callback: NameCallback}

func (f *hydraLogin) order() []string { return append(hydraNames[:], NameToken) }

func (f *hydraLogin) run(it *flowIter) {
	if callback, err := f.login.Login(it.hydraHop, it.username(f.username)); err == nil {
		f.exchangeCode(it, callback)
	}
}

// errHopFailed ends a Hydra login at a failed hop, recorded as such.
var errHopFailed = errors.New("hop failed")

// hydraHop sends a hop of Hydra's login as a named request, judged by the
// hop's check: a wrong status outside 2xx is non2xx, anything else the
// check refuses (a 2xx where a redirect was wanted too) a failed check.
func (it *flowIter) hydraHop(hop hydralogin.Hop, req *http.Request, check hydralogin.Check) error {
	req.Header.Set("User-Agent", userAgent)
	_, ok := it.do(hydraNames[hop], req, func(r *reply) class {
		err := check(&hydralogin.Response{Status: r.status, Header: r.header, Body: r.body})
		var e *hydralogin.Error
		switch {
		case err == nil:
			return classOK
		case errors.As(err, &e) && e.WrongStatus && (e.Status < 200 || e.Status > 299):
			return classNon2xx
		}
		return classCheck
	})
	if !ok {
		return errHopFailed
	}
	return nil
}

// formLogin drives a login form the way a browser does: the page's first
// POST form is filled with its hidden fields plus username and password
// and submitted with the cookies of the iteration.
//
// Keycloak (pageHop false):
//
//	login_authorize  GET  auth endpoint  -> 200 login form
//	login_submit     POST form action    -> 302 redirect_uri?code=&state=
//	oidc_token       POST token endpoint authorization_code
//
// The reference OP (pageHop true), as scripts/products/refop's refop_login:
//
//	login_authorize  GET  /auth                    -> 302 /login/username?authRequestID=
//	login_form       GET  /login/username?...      -> 200 login form
//	login_submit     POST /login/username          -> 302 /authorize/callback?id=
//	login_callback   GET  /authorize/callback?id=  -> 302 redirect_uri?code=&state=
//	oidc_token       POST /oauth/token             authorization_code
type formLogin struct {
	authCode
	password string
	pageHop  bool
}

func (f *formLogin) order() []string {
	if f.pageHop {
		return []string{NameAuthorize, NameLoginForm, NameSubmit, NameCallback, NameToken}
	}
	return []string{NameAuthorize, NameSubmit, NameToken}
}

func (f *formLogin) run(it *flowIter) {
	state := newState()
	var page *loginForm
	pageCheck := func(r *reply) class {
		if c := want2xx(nil)(r); c != classOK {
			return c
		}
		if page = parseLoginForm(r.body, r.url); page == nil {
			return classCheck
		}
		return classOK
	}
	auth := newRequest(http.MethodGet, f.authorizeURL(state), "", "")
	if f.pageHop {
		r, ok := it.do(NameAuthorize, auth, wantRedirect(nil))
		if !ok {
			return
		}
		loc, _ := r.location()
		if _, ok := it.do(NameLoginForm, newRequest(http.MethodGet, loc, "", ""), pageCheck); !ok {
			return
		}
	} else if _, ok := it.do(NameAuthorize, auth, pageCheck); !ok {
		return
	}
	r, ok := it.do(NameSubmit, f.submit(it, page), f.submitCheck(state))
	if !ok {
		return
	}
	if f.pageHop {
		loc, _ := r.location()
		if r, ok = it.do(NameCallback, newRequest(http.MethodGet, loc, "", ""), wantRedirect(f.callbackOK(state))); !ok {
			return
		}
	}
	f.exchange(it, r)
}

// submit is the POST of the login form with the user's credentials.
func (f *formLogin) submit(it *flowIter, page *loginForm) *http.Request {
	form := url.Values{}
	for _, kv := range page.hidden {
		form.Add(kv[0], kv[1])
	}
	form.Set("username", it.username(f.username))
	form.Set("password", f.password)
	return newRequest(http.MethodPost, page.action, form.Encode(), "application/x-www-form-urlencoded")
}

// submitCheck: with a callback hop the submit redirects anywhere but to the
// client (the callback hop's check follows); without one it is the callback.
// A wrong password answers 200 with the form again: a failed check.
func (f *formLogin) submitCheck(state string) judge {
	if f.pageHop {
		return wantRedirect(func(loc *url.URL) bool { return !f.isCallback(loc) })
	}
	return wantRedirect(f.callbackOK(state))
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
// bodies are internal/zitadel's, whose tests hold them to Zitadel's
// written API shapes, themselves checked against Zitadel's definitions
// (@zitadel/proto; internal/zitadel/zitadeldefs).
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
	auth.Header.Set(zitadel.LoginClientHeader, f.loginClient)
	r, ok := it.do(NameAuthorize, auth, wantRedirect(hasQuery("authRequest")))
	if !ok {
		return
	}
	loc, _ := r.location() // parsed by the redirect check
	id := loc.Query().Get("authRequest")

	var session zitadel.Session
	checks := zitadel.NewSessionChecks(it.username(f.username), f.password)
	r, ok = it.do(NameSession, f.apiRequest("/v2/sessions", checks), want2xx(func(body []byte) bool {
		return json.Unmarshal(body, &session) == nil && session.ID != "" && session.Token != ""
	}))
	if !ok || r == nil {
		return
	}

	var callback *url.URL
	check := f.callbackOK(state)
	_, ok = it.do(NameFinalize, f.apiRequest("/v2/oidc/auth_requests/"+url.PathEscape(id),
		zitadel.CallbackRequest{Session: session}), want2xx(func(body []byte) bool {
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
