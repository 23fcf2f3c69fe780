// Package formlogin is a browser's login through an HTML login form: the
// page's login form (its first POST form with a password input) filled
// with its hidden fields plus the user's name and password, and a consent
// form answered when the server shows one (Client.Consent). It is the one
// implementation behind loadstep's timed auth_code iterations
// (internal/load, --login form and form-page) and mintpool's form and
// form-page pools (internal/mint), for Keycloak, the reference OP, Spring
// Authorization Server, node oidc-provider and the generic adapter's IdP.
//
// form (PageHop false: the authorization response is the form; Keycloak):
//
//	Authorize  GET  auth endpoint?...&state  -> 200 login form (login cookies)
//	Submit     POST form action              -> 302 redirect_uri?code=&state=
//	                                            (Consent: or 200 a consent form)
//	Consent    POST the consent form          -> 302 redirect_uri?code=&state=
//
// form-page (PageHop true: the reference OP, Spring, node oidc-provider):
//
//	Authorize  GET  /auth?...&state          -> 302 /login/username?authRequestID=
//	Page       GET  /login/username?...      -> 200 login form
//	Submit     POST /login/username          -> 302 /authorize/callback?id=
//	Callback   GET  /authorize/callback?id=  -> 302 redirect_uri?code=&state=
//	                                            (Consent: or 200 a consent form)
//	Consent    POST the consent form          -> 302 redirect_uri?code=&state=
//
// The field names are the page's own (Form.User, Form.Password) unless the
// Client names them; Client.Fields are sent beside them. A consent form is
// a 2xx page's POST form without a password input where the login wants
// the redirect to the client: posted as it stands (hidden fields, checked
// boxes, its first named submit control), it must redirect to the client.
// A server that remembers a user's consent shows it once: the Consent hop
// is sent only when the page is there.
//
// The code exchange that follows is the caller's. The caller sends the
// requests (loginhop.Do) with one cookie jar per login (Keycloak ties the
// form to its cookies, and sets them Secure even over http: Go's jar sends
// them to loopback hosts, as browsers do) and follows no redirect. A
// refusal is a *loginhop.Error; a wrong password is a wrong status, a 200
// with the form again where the submit wants a redirect.
package formlogin

import (
	"cmp"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/internal/logsafe"
)

// Hop is one request of the login, in the order sent.
type Hop int

const (
	Authorize   Hop = iota // the authorization request
	Page                   // GET the login page the authorization request redirected to (PageHop)
	Submit                 // POST the login form with the user's name and password
	Callback               // GET the submit's redirect: redirects to the client with the code (PageHop)
	ConsentPage            // GET the consent page a redirect led to, when the server shows one (Client.Consent)
	Consent                // POST the consent form, when the server shows one (Client.Consent)
	Resume                 // GET the consent's redirect when it does not go to the client (Client.Consent)
)

var hopNames = [...]string{Authorize: "authorize", Page: "page", Submit: "submit", Callback: "callback",
	ConsentPage: "consent_page", Consent: "consent", Resume: "resume"}

// String is the hop's name, as its errors give it.
func (h Hop) String() string { return hopNames[h] }

// Client is what the login needs of the client and the server.
type Client struct {
	AuthURL     string // the authorization endpoint
	ClientID    string
	RedirectURI string
	Scope       string
	PageHop     bool // the authorization request redirects to the login page (the reference OP)
	// UserField and PasswordField name the login form's inputs; "": the
	// page's own (Form.User, Form.Password), which it must have.
	UserField, PasswordField string
	// Fields are sent with the user's name and password, name and value
	// (a field the page's script would add), replacing the page's own.
	Fields [][2]string
	// Consent: a consent form where the login wants the redirect to the
	// client is answered (the Consent hop); without it, such a page fails
	// the hop as any 2xx where a redirect is wanted.
	Consent bool
}

// Flow is a client's login, safe for concurrent use.
type Flow struct {
	auth                *loginhop.Authorization
	pageHop, consent    bool
	userField, pwdField string
	fields              [][2]string
}

// New checks the client's URLs and returns its login.
func New(c Client) (*Flow, error) {
	auth, err := loginhop.NewAuthorization(c.AuthURL, c.ClientID, c.RedirectURI, c.Scope)
	if err != nil {
		return nil, err
	}
	return &Flow{auth: auth, pageHop: c.PageHop, consent: c.Consent, userField: c.UserField, pwdField: c.PasswordField,
		fields: c.Fields}, nil
}

// Hops are the login's requests in the order sent; ConsentPage, Consent
// and Resume, last, are sent only when the server asks for consent, each
// where its shape of consent needs it.
func (f *Flow) Hops() []Hop {
	hops := []Hop{Authorize, Submit}
	if f.pageHop {
		hops = []Hop{Authorize, Page, Submit, Callback}
	}
	if f.consent {
		hops = append(hops, ConsentPage, Consent, Resume)
	}
	return hops
}

// Login logs username in with password and returns the callback URL,
// checked: the client's redirect URI with a code, the login's state and no
// error.
func (f *Flow) Login(do loginhop.Do[Hop], username, password string) (*url.URL, error) {
	auth, state := f.auth.Start()
	pageURL := auth
	if f.pageHop {
		loc, err := f.follow(do, Authorize, get(auth), nil, nil)
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
		return f.toClient(do, Submit, submit, state)
	}
	next, err := f.follow(do, Submit, submit, func(e *loginhop.Error, loc *url.URL) error {
		if f.auth.IsCallback(loc) {
			return e.Detailf(": HTTP %d redirect to the client before the callback hop", e.Status)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return f.toClient(do, Callback, get(next), state)
}

// toClient sends req as hop, wanting the redirect to the client with the
// code. With Consent the server may ask for consent first, in the shapes
// the products take: a consent form in the hop's answer (Keycloak's and
// Spring's theme in a 2xx), or behind a redirect elsewhere (Keycloak's
// required action: ConsentPage GETs it); the consent posted (Consent) must
// redirect to the client, or once through a redirect of the server's own
// that must (node oidc-provider's resume: Resume).
func (f *Flow) toClient(do loginhop.Do[Hop], hop Hop, req *http.Request, state string) (*url.URL, error) {
	if !f.consent {
		return f.follow(do, hop, req, f.checkCallback(state), nil)
	}
	var form *Form
	loc, err := f.follow(do, hop, req, f.callbackOr(state), f.consentPage(req.URL, &form))
	if err != nil {
		return nil, err
	}
	if form == nil && f.auth.IsCallback(loc) {
		return loc, nil // no consent asked
	}
	if form == nil { // a redirect elsewhere: to the consent page
		page := get(loc)
		noPage := func(e *loginhop.Error, to *url.URL) error {
			return e.Detailf(": HTTP %d redirect to %s where the consent page was wanted", e.Status, logsafe.URL(to))
		}
		if _, err := f.follow(do, ConsentPage, page, noPage, f.consentPage(page.URL, &form)); err != nil {
			return nil, err
		}
	}
	if loc, err = f.follow(do, Consent, f.consentRequest(form), f.callbackOr(state), nil); err != nil || f.auth.IsCallback(loc) {
		return loc, err
	}
	return f.follow(do, Resume, get(loc), f.checkCallback(state), nil)
}

// callbackOr judges a redirect that may go elsewhere than the client (to a
// consent page, a resume): one to the client is a callback, checked.
func (f *Flow) callbackOr(state string) func(*loginhop.Error, *url.URL) error {
	return func(e *loginhop.Error, loc *url.URL) error {
		if f.auth.IsCallback(loc) {
			return f.checkCallback(state)(e, loc)
		}
		return nil
	}
}

// consentPage takes a 2xx answer with a consent form into *form; any other
// 2xx is a refusal (the login form again, after a wrong password).
func (f *Flow) consentPage(base *url.URL, form **Form) func(*loginhop.Error, *loginhop.Response) error {
	return func(e *loginhop.Error, r *loginhop.Response) error {
		if *form = consentForm(r.Body, base); *form == nil {
			e.WrongStatus = true // not a consent page: a 2xx where the redirect was wanted
			return e
		}
		return nil
	}
}

// consentForm is page's consent form: its first POST form, when it has no
// password input (a login form again is a refusal); nil when none.
func consentForm(page []byte, base *url.URL) *Form {
	form := ParseForm(page, base)
	if form == nil || form.Password != "" {
		return nil
	}
	return form
}

// consentRequest is the POST of a consent form as it stands: hidden
// fields, checked boxes, its first named submit control.
func (f *Flow) consentRequest(form *Form) *http.Request {
	v := url.Values{}
	for _, kv := range slices.Concat(form.Hidden, form.Checked) {
		v.Add(kv[0], kv[1])
	}
	if form.Submit[0] != "" {
		v.Add(form.Submit[0], form.Submit[1])
	}
	return postForm(form.Action, v)
}

// page GETs the login page at target and returns its login form, its
// user name and password inputs named (the Client's names, else the
// form's own, which it must then have).
func (f *Flow) page(do loginhop.Do[Hop], hop Hop, target *url.URL) (*Form, error) {
	var form *Form
	err := do(hop, get(target), func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: "GET " + logsafe.URL(target), Status: r.Status, Want: loginhop.WantPage}
		if r.Status < 200 || r.Status > 299 {
			e.WrongStatus = true
			return e
		}
		if form = LoginForm(r.Body, target); form == nil {
			return e.Detailf(": HTTP %d page has no login form (no <form method=\"post\">)", r.Status)
		}
		form.User, form.Password = cmp.Or(f.userField, form.User), cmp.Or(f.pwdField, form.Password)
		switch {
		case form.Password == "":
			return e.Detailf(": HTTP %d page's form (action %s) has no password input: name the fields (user and password field)", r.Status, logsafe.URL(form.Action))
		case form.User == "":
			return e.Detailf(": HTTP %d page's form (action %s) has no user name input (text or email) before its password input: name it (user field)", r.Status, logsafe.URL(form.Action))
		}
		return nil
	})
	return form, err
}

// submitRequest is the POST of the login form with the user's
// credentials: its hidden fields, the user's name and password under the
// names page gave them, then the Client's Fields.
func (f *Flow) submitRequest(form *Form, username, password string) *http.Request {
	v := url.Values{}
	for _, kv := range form.Hidden {
		v.Add(kv[0], kv[1])
	}
	v.Set(form.User, username)
	v.Set(form.Password, password)
	for _, kv := range f.fields {
		v.Set(kv[0], kv[1])
	}
	return postForm(form.Action, v)
}

func postForm(action *url.URL, v url.Values) *http.Request {
	req := newRequest(http.MethodPost, action, v.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// follow sends req wanting a redirect whose Location parses; check (nil:
// any) judges the Location, resolved against the request's URL, which
// follow returns. page (nil: none) may take a 2xx in its stead: its
// verdict on the response, with the error a 2xx would be; follow then
// returns no URL.
func (f *Flow) follow(do loginhop.Do[Hop], hop Hop, req *http.Request, check func(*loginhop.Error, *url.URL) error,
	page func(*loginhop.Error, *loginhop.Response) error) (*url.URL, error) {
	var loc *url.URL
	err := do(hop, req, func(r *loginhop.Response) error {
		e := &loginhop.Error{Hop: hop.String(), Op: req.Method + " " + logsafe.URL(req.URL), Status: r.Status, Want: loginhop.WantRedirect}
		if page != nil && r.Status >= 200 && r.Status <= 299 {
			return page(e, r)
		}
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
