// Package adminaccept is Ory Hydra's headless login and consent, the
// login protocol "admin-accept" (docs/products/hydra.md): the login and
// consent apps are replaced by PUTs to the admin API. It is the one
// implementation behind loadstep's timed auth_code iterations
// (internal/load, --login admin-accept) and mintpool's admin-accept pools
// (internal/mint):
//
//	Authorize      GET  /oauth2/auth?...&state  -> 302 ?login_challenge (login CSRF cookie)
//	AcceptLogin    PUT  admin login/accept      -> 2xx {redirect_to}
//	Verifier       GET  redirect_to             -> 302 ?consent_challenge (consent CSRF cookie)
//	AcceptConsent  PUT  admin consent/accept    -> 2xx {redirect_to}
//	Callback       GET  redirect_to             -> 303 redirect_uri?code=&state=
//
// The code exchange that follows is the caller's: each tool has one for
// all its flows. The caller sends the requests (loginhop.Do): loadstep
// times and counts each, mintpool turns a failure (a *loginhop.Error)
// into its error text. Either sends
// them with one cookie jar per login (Hydra ties the challenges to CSRF
// cookies; a lost cookie shows as error=request_forbidden in a redirect)
// and follows no redirect.
package adminaccept

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/internal/logsafe"
)

// AuthPath is Hydra's authorization endpoint below its issuer, for a
// caller whose discovery document names none.
const AuthPath = "/oauth2/auth"

// Hop is one request of the login, in the order sent.
type Hop int

const (
	Authorize     Hop = iota // the authorization request
	AcceptLogin              // the admin API's login accept
	Verifier                 // the authorization request again, with the login verifier
	AcceptConsent            // the admin API's consent accept
	Callback                 // with the consent verifier: redirects to the client with the code
)

// Hops is the number of hops.
const Hops = int(Callback) + 1

var hopNames = [Hops]string{Authorize: "authorize", AcceptLogin: "accept_login", Verifier: "verifier",
	AcceptConsent: "accept_consent", Callback: "callback"}

// String is the hop's name, as its errors give it.
func (h Hop) String() string { return hopNames[h] }

// Client is what the login needs of the client and the server.
type Client struct {
	AuthURL     string // the authorization endpoint
	AdminURL    string // the admin API's base URL
	ClientID    string
	RedirectURI string
	Scope       string // space-separated, granted in full at consent
}

// Flow is a client's login, safe for concurrent use.
type Flow struct {
	auth   *loginhop.Authorization
	admin  *url.URL
	scopes []string
}

// New checks the client's URLs and returns its login.
func New(c Client) (*Flow, error) {
	auth, err := loginhop.NewAuthorization(c.AuthURL, c.ClientID, c.RedirectURI, c.Scope)
	if err != nil {
		return nil, err
	}
	admin, err := url.Parse(c.AdminURL)
	if err != nil {
		return nil, fmt.Errorf("admin URL %q: %w", c.AdminURL, err)
	}
	return &Flow{auth: auth, admin: admin, scopes: strings.Fields(c.Scope)}, nil
}

// The accept bodies use documented fields only: Hydra rejects unknown ones.
type loginAccept struct {
	Subject  string `json:"subject"`
	Remember bool   `json:"remember"`
}

type consentAccept struct {
	GrantScope    []string       `json:"grant_scope"`
	GrantAudience []string       `json:"grant_access_token_audience"`
	Session       consentSession `json:"session"`
}

type consentSession struct {
	IDToken map[string]any `json:"id_token"`
}

// Login logs subject in and returns the callback URL, checked: the
// client's redirect URI with a code and the login's state.
func (f *Flow) Login(do loginhop.Do[Hop], subject string) (*url.URL, error) {
	auth, state := f.auth.Start()
	challenge, err := f.redirect1(do, Authorize, auth, "login_challenge")
	if err != nil {
		return nil, err
	}
	next, err := f.accept(do, AcceptLogin, "login", challenge, loginAccept{Subject: subject})
	if err != nil {
		return nil, err
	}
	if challenge, err = f.redirect1(do, Verifier, next, "consent_challenge"); err != nil {
		return nil, err
	}
	body := consentAccept{GrantScope: f.scopes, GrantAudience: []string{}, Session: consentSession{IDToken: map[string]any{}}}
	if next, err = f.accept(do, AcceptConsent, "consent", challenge, body); err != nil {
		return nil, err
	}
	var callback *url.URL
	err = f.get(do, Callback, next, func(e *loginhop.Error, loc *url.URL) error {
		callback = loc
		return f.checkCallback(e, loc, state)
	})
	if err != nil {
		return nil, err
	}
	return callback, nil
}

// redirect1 GETs target and returns the query parameter param of the
// redirect's Location.
func (f *Flow) redirect1(do loginhop.Do[Hop], hop Hop, target *url.URL, param string) (string, error) {
	var v string
	err := f.get(do, hop, target, func(e *loginhop.Error, loc *url.URL) error {
		if v = loc.Query().Get(param); v == "" {
			return e.Detailf(": HTTP %d redirect to %s has no %s", e.Status, logsafe.URL(loc), param)
		}
		return nil
	})
	return v, err
}

// get GETs target, wanting a redirect whose Location parses and has no
// error=; then check judges the Location, resolved against target.
func (f *Flow) get(do loginhop.Do[Hop], hop Hop, target *url.URL, check func(*loginhop.Error, *url.URL) error) error {
	req, err := newRequest(hop, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	return do(hop, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: "GET " + logsafe.URL(target), Status: r.Status, Want: loginhop.WantRedirect}
		if r.Status < 300 || r.Status > 399 {
			e.WrongStatus = true
			return e
		}
		loc, err := location(target, r.Header.Get("Location"))
		if err != nil {
			return e.Detailf(": HTTP %d: bad Location: %v", r.Status, err)
		}
		// Hydra redirects its errors to the client or its fallback page.
		if q := loc.Query(); q.Get("error") != "" {
			e.Op += " -> " + logsafe.URL(loc)
			e.Detail = ": " + logsafe.Text(q.Get("error"))
			if d := logsafe.Text(q.Get("error_description")); d != "" {
				e.Detail += ": " + d
			}
			return e
		}
		return check(e, loc)
	})
}

// location is the Location header l resolved against the request's URL.
func location(base *url.URL, l string) (*url.URL, error) {
	if l == "" {
		return nil, http.ErrNoLocation
	}
	loc, err := url.Parse(l)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(loc), nil
}

// checkCallback: the callback has a code and the login's state and goes to
// the client's redirect URI (scheme, host and path).
func (f *Flow) checkCallback(e *loginhop.Error, loc *url.URL, state string) error {
	q := loc.Query()
	switch {
	case q.Get("code") == "":
		return e.Detailf(": HTTP %d redirect to %s has no code", e.Status, logsafe.URL(loc))
	case q.Get("state") != state:
		return e.Detailf(": callback %s: state does not match the request", logsafe.URL(loc))
	case !f.auth.IsCallback(loc):
		return e.Detailf(": callback went to %s, not --redirect-uri %s", logsafe.URL(loc), logsafe.URL(f.auth.Redirect()))
	}
	return nil
}

// accept PUTs the accept body of a login or consent challenge (kind) to
// the admin API and returns the redirect_to the browser would follow: an
// absolute URL.
func (f *Flow) accept(do loginhop.Do[Hop], hop Hop, kind, challenge string, body any) (*url.URL, error) {
	target := f.admin.JoinPath("admin/oauth2/auth/requests", kind, "accept")
	target.RawQuery = kind + "_challenge=" + url.QueryEscape(challenge)
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err // cannot happen: fixed types
	}
	req, err := newRequest(hop, http.MethodPut, target, b)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var next *url.URL
	err = do(hop, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: "PUT " + logsafe.URL(target), Status: r.Status}
		if r.Status < 200 || r.Status > 299 {
			e.WrongStatus = true
			return e
		}
		var out struct {
			RedirectTo string `json:"redirect_to"`
		}
		if json.Unmarshal(r.Body, &out) == nil {
			next, _ = url.Parse(out.RedirectTo)
		}
		if next == nil || !next.IsAbs() {
			return e.Detailf(": HTTP %d without redirect_to", r.Status)
		}
		return nil
	})
	return next, err
}

// newRequest is a request to a parsed URL (body nil: none).
func newRequest(hop Hop, method string, u *url.URL, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u.String(), rd)
	if err != nil { // cannot happen: u was parsed; the error would name the query
		return nil, &loginhop.Error{Hop: hop.String(), Op: method + " " + logsafe.URL(u), Detail: ": not a request URL"}
	}
	return req, nil
}
