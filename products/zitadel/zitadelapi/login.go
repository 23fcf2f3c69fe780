package zitadelapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/logsafe"
)

// The headless login through the Session API, as a custom login UI does it
// (zitadel.com/docs/guides/integrate/login-ui/oidc-standard):
//
//  1. GET  /oauth/v2/authorize?... with x-zitadel-login-client: <login client user id>
//     -> 302 Location .../login?authRequest=V2_<id>
//  2. POST /v2/sessions {checks: {user: {loginName}, password: {password}}}
//     with the login client's token -> {sessionId, sessionToken}
//  3. POST /v2/oidc/auth_requests/V2_<id> {session: {sessionId, sessionToken}}
//     with the same token -> {callbackUrl: redirect_uri?code=...&state=...}
//  4. POST /oauth/v2/token grant_type=authorization_code (client_secret_basic)
//
// The client's token must be the login client's: Zitadel links the auth
// request to the user named in the header and lets only that user (or one
// with session.link) finalize it.

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

// AuthorizeRequest is the authorization request a login starts with.
type AuthorizeRequest struct {
	Endpoint    string // authorization endpoint; "" = <base>/oauth/v2/authorize
	ClientID    string // the web app's client id
	RedirectURI string
	Scope       string
	State       string
	LoginClient string // user id of the machine user with IAM_LOGIN_CLIENT
}

// Authorize sends the authorization request with the login client header
// and returns the auth request id (V2_...) from the redirect. It sends no
// Authorization header: the endpoint only records the login client.
func (c *Client) Authorize(ctx context.Context, a AuthorizeRequest) (string, error) {
	endpoint := a.Endpoint
	if endpoint == "" {
		endpoint = c.base + AuthorizePath
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("Authorize: endpoint %q: %w", endpoint, err)
	}
	q := u.Query()
	q.Set("client_id", a.ClientID)
	q.Set("redirect_uri", a.RedirectURI)
	q.Set("response_type", "code")
	q.Set("scope", a.Scope)
	q.Set("state", a.State)
	u.RawQuery = q.Encode()
	op := "Authorize (GET " + logsafe.URL(u) + ")"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set(LoginClientHeader, a.LoginClient)
	status, data, hdr, err := c.send(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if status < 300 || status > 399 {
		e := c.apiError(op, status, data)
		e.Message = strings.TrimSpace(e.Message + " (want a redirect to the login UI)")
		return "", e
	}
	return authRequestID(op, status, u, hdr.Get("Location"))
}

// authRequestID reads authRequest=V2_... from the authorize redirect. An
// error= redirect to the client, or a v1 login redirect (authRequestID=),
// is reported as such.
func authRequestID(op string, status int, base *url.URL, location string) (string, error) {
	loc, err := base.Parse(location)
	if err != nil || location == "" {
		return "", fmt.Errorf("%s: HTTP %d without a usable Location", op, status)
	}
	q := loc.Query()
	switch {
	case q.Get("authRequest") != "":
		return q.Get("authRequest"), nil
	case q.Get("error") != "":
		return "", fmt.Errorf("%s: HTTP %d redirect to %s: %s: %s", op, status, logsafe.URL(loc), logsafe.Text(q.Get("error")), logsafe.Text(q.Get("error_description")))
	case q.Get("authRequestID") != "":
		return "", fmt.Errorf("%s: HTTP %d redirect to the v1 login (%s): the %s header was not honoured", op, status, logsafe.URL(loc), LoginClientHeader)
	}
	return "", fmt.Errorf("%s: HTTP %d redirect to %s has no authRequest", op, status, logsafe.URL(loc))
}

// Session is a Session API session; Token is a secret.
type Session struct {
	ID    string `json:"sessionId"`
	Token string `json:"sessionToken"`
}

// SessionChecks is the body of CreateSession (POST /v2/sessions) with the
// user and password checks in one request.
type SessionChecks struct {
	Checks struct {
		User struct {
			LoginName string `json:"loginName"`
		} `json:"user"`
		Password struct {
			Password string `json:"password"`
		} `json:"password"`
	} `json:"checks"`
}

// NewSessionChecks is the CreateSession body for a user and a password.
func NewSessionChecks(loginName, password string) SessionChecks {
	var b SessionChecks
	b.Checks.User.LoginName, b.Checks.Password.Password = loginName, password
	return b
}

// CallbackRequest is the body of CreateCallback (POST
// /v2/oidc/auth_requests/{id}): the session that finalizes the request.
type CallbackRequest struct {
	Session Session `json:"session"`
}

// CreateSession creates a session with the user and password checks in one
// request. The client's token needs session.write (IAM_LOGIN_CLIENT).
func (c *Client) CreateSession(ctx context.Context, loginName, password string) (Session, error) {
	var out Session
	err := c.call(ctx, "CreateSession", "POST", SessionsPath, unscoped, NewSessionChecks(loginName, password), &out)
	if err == nil && (out.ID == "" || out.Token == "") {
		err = fmt.Errorf("CreateSession: answer lacks sessionId or sessionToken")
	}
	return out, err
}

// CreateCallback finalizes an auth request with a session and returns the
// callback URL (redirect_uri?code=...&state=...), which is a credential.
func (c *Client) CreateCallback(ctx context.Context, authRequestID string, s Session) (string, error) {
	body := CallbackRequest{Session: s}
	var out struct {
		CallbackURL string `json:"callbackUrl"`
	}
	err := c.call(ctx, "CreateCallback", "POST", CallbackPath(authRequestID), unscoped, body, &out)
	return out.CallbackURL, need(err, "CreateCallback", "callbackUrl", out.CallbackURL)
}

// CallbackCode checks that a callback URL goes to redirectURI and carries
// state, and returns its code. Errors never show the code.
func CallbackCode(callback, redirectURI, state string) (string, error) {
	cb, err := url.Parse(callback)
	if err != nil {
		return "", fmt.Errorf("callback URL: %v", err)
	}
	if logsafe.URL(cb) != strings.SplitN(redirectURI, "?", 2)[0] {
		return "", fmt.Errorf("callback goes to %s, not the redirect URI %s", logsafe.URL(cb), redirectURI)
	}
	q := cb.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("callback %s: %s: %s", logsafe.URL(cb), logsafe.Text(e), logsafe.Text(q.Get("error_description")))
	}
	if q.Get("state") != state {
		return "", fmt.Errorf("callback %s: state does not match the request", logsafe.URL(cb))
	}
	if q.Get("code") == "" {
		return "", fmt.Errorf("callback %s has no code", logsafe.URL(cb))
	}
	return q.Get("code"), nil
}

// Tokens is an RFC 6749 token response.
type Tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"` // seconds
}

// CodeExchange is an authorization code grant with client_secret_basic.
type CodeExchange struct {
	TokenURL     string // "" = <base>/oauth/v2/token
	ClientID     string
	ClientSecret string // secret
	Code         string
	RedirectURI  string
}

// ExchangeCode trades a code for tokens at the token endpoint.
func (c *Client) ExchangeCode(ctx context.Context, x CodeExchange) (Tokens, error) {
	endpoint := x.TokenURL
	if endpoint == "" {
		endpoint = c.base + "/oauth/v2/token"
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {x.Code}, "redirect_uri": {x.RedirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return Tokens{}, fmt.Errorf("ExchangeCode (POST %s): %w", endpoint, err)
	}
	op := "ExchangeCode (POST " + logsafe.URL(req.URL) + ")"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", basicAuth(x.ClientID, x.ClientSecret))
	status, data, _, err := c.send(req)
	if err != nil {
		return Tokens{}, fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK {
		e := c.apiError(op, status, data)
		if len(x.ClientSecret) >= 4 {
			e.Message = strings.ReplaceAll(e.Message, x.ClientSecret, "[redacted]")
		}
		return Tokens{}, e
	}
	var t Tokens
	if err := json.Unmarshal(data, &t); err != nil || t.AccessToken == "" {
		return Tokens{}, fmt.Errorf("%s: HTTP 200 but no JSON token response with an access_token", op)
	}
	return t, nil
}

// basicAuth is client_secret_basic (RFC 6749 2.3.1): both parts are
// form-encoded before base64, which matters for Zitadel's "id@project"
// client ids.
func basicAuth(id, secret string) string {
	raw := url.QueryEscape(id) + ":" + url.QueryEscape(secret)
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(raw))
}
