// Package sessionapi is Zitadel's headless login through its Session API,
// as a custom login UI does it
// (zitadel.com/docs/guides/integrate/login-ui/oidc-standard), the login
// protocol "session-api": one implementation (Flow) behind loadstep's timed
// auth_code iterations (internal/load, --login session-api) and mintpool's
// session-api pools (internal/mint):
//
//	Authorize       GET  /oauth/v2/authorize?...&state with x-zitadel-login-client:
//	                     <login client's user id> -> 302 <login UI>?authRequest=V2_<id>
//	CreateSession   POST /v2/sessions {checks: {user: {loginName}, password: {password}}}
//	                     -> 201 {sessionId, sessionToken}
//	CreateCallback  POST /v2/oidc/auth_requests/V2_<id> {session: {sessionId, sessionToken}}
//	                     -> 200 {callbackUrl: redirect_uri?code=&state=}
//
// CreateSession and CreateCallback carry the login client's token (a PAT of
// a machine user with IAM_LOGIN_CLIENT): Zitadel links the auth request to
// the user the header names and lets only that user (or one with
// session.link) finalize it. The header's value is that user's id: Zitadel
// then makes a V2 auth request whatever the application's login version
// (internal/api/oidc/auth_request.go, CreateAuthRequest, in Zitadel's
// source).
//
// The code exchange that follows is the caller's: each tool has one for all
// its flows. The caller sends the requests (loginhop.Do): loadstep times
// and counts each, mintpool turns a failure (a *loginhop.Error) into its
// error text; a wrong status's error carries Zitadel's error body in a line
// (its Detail), the token redacted.
package sessionapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/internal/logsafe"
)

// LoginClientHeader names the login client on the authorize request. Its
// value is the login client's user id (not a client id).
const LoginClientHeader = "x-zitadel-login-client"

// The login's paths below the instance's base URL.
const (
	AuthorizePath = "/oauth/v2/authorize" // the authorization endpoint
	SessionsPath  = "/v2/sessions"        // CreateSession
)

// CallbackPath is CreateCallback's path: the auth request (V2_...) to
// finalize.
func CallbackPath(authRequestID string) string {
	return "/v2/oidc/auth_requests/" + url.PathEscape(authRequestID)
}

// Hop is one request of the Session API login, in the order sent, named
// after the call it makes, as Zitadel's API, zitadeltest's stand-in and
// zitadeldefs' check name it.
type Hop int

const (
	Authorize      Hop = iota // the authorization request with the login client header
	CreateSession             // the session, with the user and password checks
	CreateCallback            // the auth request finalized with the session: the callback URL
)

// Hops is the number of hops.
const Hops = int(CreateCallback) + 1

var hopNames = [Hops]string{Authorize: "Authorize", CreateSession: "CreateSession", CreateCallback: "CreateCallback"}

// String is the hop's name, as its errors give it.
func (h Hop) String() string { return hopNames[h] }

// FlowConfig is what the login needs of the client and the instance.
type FlowConfig struct {
	AuthURL     string // the authorization endpoint
	APIURL      string // the instance's base URL, below which SessionsPath and CallbackPath are
	ClientID    string // the web app's client id
	RedirectURI string
	Scope       string
	LoginClient string // the login client's user id: the header's value
	Token       string // the login client's token (a PAT): a secret, never in an error
}

// Flow is a client's Session API login, safe for concurrent use.
type Flow struct {
	auth        *loginhop.Authorization
	api         string // APIURL without a trailing slash
	loginClient string
	token       string
}

// NewFlow checks the client's URLs and returns its login.
func NewFlow(c FlowConfig) (*Flow, error) {
	auth, err := loginhop.NewAuthorization(c.AuthURL, c.ClientID, c.RedirectURI, c.Scope)
	if err != nil {
		return nil, err
	}
	if _, err := url.Parse(c.APIURL); err != nil {
		return nil, fmt.Errorf("API URL %q: %w", c.APIURL, err)
	}
	return &Flow{auth: auth, api: strings.TrimRight(c.APIURL, "/"), loginClient: c.LoginClient, token: c.Token}, nil
}

// Login logs loginName in with password and returns the callback URL,
// checked: the client's redirect URI with a code and the login's state.
// The caller exchanges the code.
func (f *Flow) Login(do loginhop.Do[Hop], loginName, password string) (*url.URL, error) {
	target, state := f.auth.Start()
	id, err := f.authorize(do, target)
	if err != nil {
		return nil, err
	}
	s, err := f.createSession(do, loginName, password)
	if err != nil {
		return nil, err
	}
	return f.createCallback(do, id, s, state)
}

// authorize sends the authorization request with the login client header
// (and no Authorization: the endpoint only records the login client) and
// returns the auth request id (V2_...) from the redirect. An error=
// redirect to the client, or one to the v1 login (authRequestID=), says so.
func (f *Flow) authorize(do loginhop.Do[Hop], target *url.URL) (string, error) {
	op := "Authorize (GET " + logsafe.URL(target) + ")"
	req, err := http.NewRequest(http.MethodGet, target.String(), nil)
	if err != nil { // cannot happen: target was parsed; the error would name the query
		return "", &loginhop.Error{Hop: Authorize.String(), Op: op, Detail: ": not a request URL"}
	}
	req.Header.Set(LoginClientHeader, f.loginClient)
	var id string
	err = do(Authorize, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: Authorize.String(), Op: op, Status: r.Status, Want: loginhop.WantRedirect}
		if r.Status < 300 || r.Status > 399 {
			return f.wrongStatus(e, r.Body)
		}
		l := r.Header.Get("Location")
		loc, err := target.Parse(l)
		if err != nil || l == "" {
			return e.Detailf(": HTTP %d without a usable Location", r.Status)
		}
		q := loc.Query()
		switch {
		case q.Get("authRequest") != "":
			id = q.Get("authRequest")
			return nil
		case q.Get("error") != "":
			return e.Detailf(": HTTP %d redirect to %s%s", r.Status, logsafe.URL(loc), oauthError(q))
		case q.Get("authRequestID") != "":
			return e.Detailf(": HTTP %d redirect to the v1 login (%s): the %s header was not honoured", r.Status, logsafe.URL(loc), LoginClientHeader)
		}
		return e.Detailf(": HTTP %d redirect to %s has no authRequest", r.Status, logsafe.URL(loc))
	})
	return id, err
}

// createSession creates a session with the user and password checks in
// one request, as the login client (session.write).
func (f *Flow) createSession(do loginhop.Do[Hop], loginName, password string) (session, error) {
	req, op, err := f.post(CreateSession, SessionsPath, newSessionChecks(loginName, password))
	if err != nil {
		return session{}, err
	}
	op += " for user " + logsafe.Text(loginName)
	var s session
	err = do(CreateSession, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: CreateSession.String(), Op: op, Status: r.Status}
		if r.Status < 200 || r.Status > 299 {
			return f.wrongStatus(e, r.Body)
		}
		if json.Unmarshal(r.Body, &s) != nil || s.ID == "" || s.Token == "" {
			return e.Detailf(": HTTP %d: answer lacks sessionId or sessionToken", r.Status)
		}
		return nil
	})
	return s, err
}

// createCallback finalizes the auth request id with the session, as the
// login client the header named, and returns the callback URL, checked
// (checkCallback).
func (f *Flow) createCallback(do loginhop.Do[Hop], id string, s session, state string) (*url.URL, error) {
	req, op, err := f.post(CreateCallback, CallbackPath(id), callbackRequest{Session: s})
	if err != nil {
		return nil, err
	}
	var callback *url.URL
	err = do(CreateCallback, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: CreateCallback.String(), Op: op, Status: r.Status}
		if r.Status < 200 || r.Status > 299 {
			return f.wrongStatus(e, r.Body)
		}
		var out struct {
			CallbackURL string `json:"callbackUrl"`
		}
		if json.Unmarshal(r.Body, &out) != nil || out.CallbackURL == "" {
			return e.Detailf(": HTTP %d without callbackUrl", r.Status)
		}
		loc, err := url.Parse(out.CallbackURL)
		if err != nil { // its error would show the code
			return e.Detailf(": HTTP %d: callbackUrl does not parse", r.Status)
		}
		callback = loc
		return f.checkCallback(e, loc, state)
	})
	if err != nil {
		return nil, err
	}
	return callback, nil
}

// checkCallback: the callback goes to the client's redirect URI (scheme,
// host and path) with no error=, the login's state and a code.
func (f *Flow) checkCallback(e *loginhop.Error, loc *url.URL, state string) error {
	q := loc.Query()
	switch {
	case !f.auth.IsCallback(loc):
		return e.Detailf(": callback goes to %s, not the redirect URI %s", logsafe.URL(loc), logsafe.URL(f.auth.Redirect()))
	case q.Get("error") != "":
		return e.Detailf(": callback %s%s", logsafe.URL(loc), oauthError(q))
	case q.Get("state") != state:
		return e.Detailf(": callback %s: state does not match the request", logsafe.URL(loc))
	case q.Get("code") == "":
		return e.Detailf(": callback %s has no code", logsafe.URL(loc))
	}
	return nil
}

// oauthError is an OAuth error redirect's error and description: ": error:
// description".
func oauthError(q url.Values) string {
	s := ": " + logsafe.Text(q.Get("error"))
	if d := logsafe.Text(q.Get("error_description")); d != "" {
		s += ": " + d
	}
	return s
}

// post is a JSON POST of body to the API path with the login client's
// token, and the request as an error names it: "CreateSession (POST
// /v2/sessions)".
func (f *Flow) post(hop Hop, path string, body any) (*http.Request, string, error) {
	op := hop.String() + " (POST " + path + ")"
	b, err := json.Marshal(body)
	if err != nil {
		return nil, op, err // cannot happen: fixed types
	}
	req, err := http.NewRequest(http.MethodPost, f.api+path, bytes.NewReader(b))
	if err != nil { // cannot happen: a parsed base URL, an escaped path
		return nil, op, &loginhop.Error{Hop: hop.String(), Op: op, Detail: ": not a request URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.token)
	return req, op, nil
}

// wrongStatus is e after a wrong status, with what Zitadel said: its error
// body (the API's {code, message} or an OAuth error) in a line, the token
// redacted.
func (f *Flow) wrongStatus(e *loginhop.Error, body []byte) error {
	e.WrongStatus = true
	code, msg := ErrorBody(body)
	if msg = logsafe.Text(logsafe.Redact(msg, f.token)); msg != "" {
		e.Detail = ": " + msg
	}
	if code = logsafe.Text(code); code != "" {
		e.Detail += " (code " + code + ")"
	}
	return e
}

// session is a Session API session; its token is a secret.
type session struct {
	ID    string `json:"sessionId"`
	Token string `json:"sessionToken"`
}

// sessionChecks is the body of CreateSession (POST /v2/sessions) with the
// user and password checks in one request.
type sessionChecks struct {
	Checks struct {
		User struct {
			LoginName string `json:"loginName"`
		} `json:"user"`
		Password struct {
			Password string `json:"password"`
		} `json:"password"`
	} `json:"checks"`
}

func newSessionChecks(loginName, password string) sessionChecks {
	var b sessionChecks
	b.Checks.User.LoginName, b.Checks.Password.Password = loginName, password
	return b
}

// callbackRequest is the body of CreateCallback (POST
// /v2/oidc/auth_requests/{id}): the session that finalizes the request.
type callbackRequest struct {
	Session session `json:"session"`
}

// ErrorBody reads Zitadel's error body: grpc-gateway's google.rpc.Status
// {code: number, message, details}, the connect form {code: "name",
// message} or an OAuth error {error, error_description}. Anything else is
// the message as it is. The login words a refusal with it, and so do the
// provisioning calls (products/zitadel/zitadelapi's Client): one reader.
func ErrorBody(data []byte) (code, message string) {
	var body struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Error   string          `json:"error"`             // OAuth endpoints
		Desc    string          `json:"error_description"` // OAuth endpoints
	}
	switch {
	case json.Unmarshal(data, &body) != nil || (body.Message == "" && body.Error == ""):
		return "", string(data)
	case body.Error != "":
		return body.Error, body.Desc
	}
	return codeString(body.Code), body.Message
}

func codeString(raw json.RawMessage) string {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return strconv.Itoa(n)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}
