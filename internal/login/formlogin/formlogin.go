// Package formlogin is a browser's login through a product's HTML login
// form: the first POST form of the page, filled with its hidden fields
// plus username and password. It is the one implementation behind
// loadstep's timed auth_code iterations (internal/load, --login form
// and refop) and mintpool's form-page pools (internal/mint).
//
// Keycloak (PageHop false: the authorization response is the form):
//
//	Authorize  GET  auth endpoint?...&state  -> 200 login form (login cookies)
//	Submit     POST form action              -> 302 redirect_uri?code=&state=
//
// The reference OP (PageHop true):
//
//	Authorize  GET  /auth?...&state          -> 302 /login/username?authRequestID=
//	Form       GET  /login/username?...      -> 200 login form
//	Submit     POST /login/username          -> 302 /authorize/callback?id=
//	Callback   GET  /authorize/callback?id=  -> 302 redirect_uri?code=&state=
//
// The code exchange that follows is the caller's. The caller sends the
// requests (loginhop.Do) with one cookie jar per login (Keycloak ties the
// form to its cookies, and sets them Secure even over http: Go's jar sends
// them to loopback hosts, as browsers do) and follows no redirect. A
// refusal is a *loginhop.Error; a wrong password is a wrong status, a 200
// with the form again where the submit wants a redirect.
package formlogin

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/internal/logsafe"
)

// Hop is one request of the login, in the order sent.
type Hop int

const (
	Authorize Hop = iota // the authorization request
	Page                 // GET the login page the authorization request redirected to (PageHop)
	Submit               // POST the login form with the user's name and password
	Callback             // GET the submit's redirect: redirects to the client with the code (PageHop)
)

var hopNames = [...]string{Authorize: "authorize", Page: "page", Submit: "submit", Callback: "callback"}

// String is the hop's name, as its errors give it.
func (h Hop) String() string { return hopNames[h] }

// Client is what the login needs of the client and the server.
type Client struct {
	AuthURL     string // the authorization endpoint
	ClientID    string
	RedirectURI string
	Scope       string
	PageHop     bool // the authorization request redirects to the login page (the reference OP)
}

// Flow is a client's login, safe for concurrent use.
type Flow struct {
	auth    *loginhop.Authorization
	pageHop bool
}

// New checks the client's URLs and returns its login.
func New(c Client) (*Flow, error) {
	auth, err := loginhop.NewAuthorization(c.AuthURL, c.ClientID, c.RedirectURI, c.Scope)
	if err != nil {
		return nil, err
	}
	return &Flow{auth: auth, pageHop: c.PageHop}, nil
}

// Hops are the login's requests in the order sent.
func (f *Flow) Hops() []Hop {
	if f.pageHop {
		return []Hop{Authorize, Page, Submit, Callback}
	}
	return []Hop{Authorize, Submit}
}

// Login logs username in with password and returns the callback URL,
// checked: the client's redirect URI with a code, the login's state and no
// error.
func (f *Flow) Login(do loginhop.Do[Hop], username, password string) (*url.URL, error) {
	auth, state := f.auth.Start()
	pageURL := auth
	if f.pageHop {
		loc, err := f.follow(do, Authorize, get(auth), nil)
		if err != nil {
			return nil, err
		}
		pageURL = loc
	}
	hop := Authorize
	if f.pageHop {
		hop = Page
	}
	form, err := f.page(do, hop, pageURL)
	if err != nil {
		return nil, err
	}
	submit := f.submitRequest(form, username, password)
	if !f.pageHop {
		return f.follow(do, Submit, submit, f.checkCallback(state))
	}
	next, err := f.follow(do, Submit, submit, func(e *loginhop.Error, loc *url.URL) error {
		if f.auth.IsCallback(loc) {
			return e.Detailf(": HTTP %d redirect to the client before the callback hop", e.Status)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.follow(do, Callback, get(next), f.checkCallback(state))
}

// page GETs the login page at target and returns its form.
func (f *Flow) page(do loginhop.Do[Hop], hop Hop, target *url.URL) (*Form, error) {
	var form *Form
	err := do(hop, get(target), func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: "GET " + logsafe.URL(target), Status: r.Status, Want: loginhop.WantPage}
		if r.Status < 200 || r.Status > 299 {
			e.WrongStatus = true
			return e
		}
		if form = ParseForm(r.Body, target); form == nil {
			return e.Detailf(": HTTP %d page has no login form (no <form method=\"post\">)", r.Status)
		}
		return nil
	})
	return form, err
}

// submitRequest is the POST of the form with the user's credentials.
func (f *Flow) submitRequest(form *Form, username, password string) *http.Request {
	v := url.Values{}
	for _, kv := range form.Hidden {
		v.Add(kv[0], kv[1])
	}
	v.Set("username", username)
	v.Set("password", password)
	req := newRequest(http.MethodPost, form.Action, v.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// follow sends req wanting a redirect whose Location parses; check (nil:
// any) judges the Location, resolved against the request's URL, which
// follow returns.
func (f *Flow) follow(do loginhop.Do[Hop], hop Hop, req *http.Request, check func(*loginhop.Error, *url.URL) error) (*url.URL, error) {
	var loc *url.URL
	err := do(hop, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: req.Method + " " + logsafe.URL(req.URL), Status: r.Status, Want: loginhop.WantRedirect}
		if r.Status < 300 || r.Status > 399 {
			e.WrongStatus = true
			return e
		}
		l := r.Header.Get("Location")
		if l == "" {
			return e.Detailf(": HTTP %d without Location", r.Status)
		}
		u, err := url.Parse(l)
		if err != nil {
			return e.Detailf(": HTTP %d: bad Location: %v", r.Status, err)
		}
		loc = req.URL.ResolveReference(u)
		if check != nil {
			return check(e, loc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loc, nil
}

// checkCallback: the callback goes to the client's redirect URI with a
// code, the login's state and no error= (a product redirects its failures
// to the client).
func (f *Flow) checkCallback(state string) func(*loginhop.Error, *url.URL) error {
	return func(e *loginhop.Error, loc *url.URL) error {
		q := loc.Query()
		switch {
		case !f.auth.IsCallback(loc):
			return e.Detailf(": callback went to %s, not --redirect-uri %s", logsafe.URL(loc), logsafe.URL(f.auth.Redirect()))
		case q.Get("error") != "":
			return e.Detailf(": %s", logsafe.Text(q.Get("error")))
		case q.Get("code") == "":
			return e.Detailf(": HTTP %d redirect to %s has no code", e.Status, logsafe.URL(loc))
		case q.Get("state") != state:
			return e.Detailf(": callback %s: state does not match the request", logsafe.URL(loc))
		}
		return nil
	}
}

func get(u *url.URL) *http.Request { return newRequest(http.MethodGet, u, "") }

// newRequest is a request to a parsed URL, as http.NewRequest builds it
// but without parsing the URL again (body "": none).
func newRequest(method string, u *url.URL, body string) *http.Request {
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if body != "" {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	return req
}
