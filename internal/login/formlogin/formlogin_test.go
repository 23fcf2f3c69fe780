package formlogin

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
	"github.com/idpbench/idpbench/internal/loginhop"
)

func newTestFlow(t *testing.T, op *formlogintest.OP, redirect string) *Flow {
	t.Helper()
	f, err := New(Client{AuthURL: op.Server.URL + "/auth", ClientID: formlogintest.ClientID, RedirectURI: redirect,
		Scope: "openid offline_access", PageHop: op.Refop})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// recorded is a Do that records the hops it sends.
func recorded(t *testing.T, sent *[]Hop) loginhop.Do[Hop] {
	do := formlogintest.Do[Hop](t.Context())
	return func(hop Hop, req *http.Request, check loginhop.Check) error {
		*sent = append(*sent, hop)
		return do(hop, req, check)
	}
}

func TestLogin(t *testing.T) {
	for _, refop := range []bool{false, true} {
		op := formlogintest.NewOP(t, refop)
		f := newTestFlow(t, op, formlogintest.RedirectURI)
		var sent []Hop
		cb, err := f.Login(recorded(t, &sent), "user7", formlogintest.Password)
		if err != nil {
			t.Fatalf("refop %v: %v", refop, err)
		}
		if cb.Scheme+"://"+cb.Host+cb.Path != formlogintest.RedirectURI || cb.Query().Get("code") == "" {
			t.Errorf("refop %v: callback %s", refop, cb)
		}
		if !slices.Equal(sent, f.Hops()) || fmt.Sprint(op.Logins()) != "map[user7:1]" {
			t.Errorf("refop %v: hops %v, want %v; logins %v", refop, sent, f.Hops(), op.Logins())
		}
	}
}

// TestLoginFailures: each way the fake products refuse a login ends it
// at that hop with a *loginhop.Error that names the hop, says whether the
// status was wrong (loadstep: non2xx outside 2xx, else a failed check)
// and, in words mintpool prints, what was wrong, never naming the query
// or the password.
func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name        string
		refop       bool
		mod         func(op *formlogintest.OP, redirect, user, password *string)
		hop         Hop
		wrongStatus bool
		want        string
	}{
		{"keycloak wrong password", false, func(_ *formlogintest.OP, _, _, p *string) { *p = "not-it" }, Submit, true,
			"/login-actions/authenticate (want a redirect): HTTP 200"},
		{"refop wrong password", true, func(_ *formlogintest.OP, _, _, p *string) { *p = "not-it" }, Submit, true,
			"/login/username (want a redirect): HTTP 200"},
		{"refop unknown user", true, func(_ *formlogintest.OP, _, u, _ *string) { *u = "admin" }, Submit, true,
			"/login/username (want a redirect): HTTP 200"},
		{"keycloak page without a POST form", false, func(op *formlogintest.OP, _, _, _ *string) { op.BadPage = true }, Authorize, false,
			"/auth: HTTP 200 page has no login form"},
		{"refop page without a POST form", true, func(op *formlogintest.OP, _, _, _ *string) { op.BadPage = true }, Page, false,
			"/login/username: HTTP 200 page has no login form"},
		{"keycloak unregistered redirect", false, func(_ *formlogintest.OP, r, _, _ *string) { *r = "http://127.0.0.1/other" }, Authorize, true,
			"/auth (want a 2xx page): HTTP 400"},
		{"refop unregistered redirect", true, func(_ *formlogintest.OP, r, _, _ *string) { *r = "http://127.0.0.1/other" }, Authorize, true,
			"/auth (want a redirect): HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := formlogintest.NewOP(t, tt.refop)
			redirect, user, password := formlogintest.RedirectURI, "user1", formlogintest.Password
			tt.mod(op, &redirect, &user, &password)
			var sent []Hop
			_, err := newTestFlow(t, op, redirect).Login(recorded(t, &sent), user, password)
			e, ok := err.(*loginhop.Error)
			if !ok {
				t.Fatalf("error %v (%T), want a *loginhop.Error", err, err)
			}
			if e.Hop != tt.hop.String() || e.WrongStatus != tt.wrongStatus {
				t.Errorf("hop %s wrong status %v, want %s %v", e.Hop, e.WrongStatus, tt.hop, tt.wrongStatus)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			for _, leak := range []string{"?", "session_code", "authRequestID", password} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q names %q", err, leak)
				}
			}
			if last := sent[len(sent)-1]; last != tt.hop {
				t.Errorf("hops sent %v: the login went on after %s", sent, tt.hop)
			}
		})
	}
}

// TestLoginOptions: the page's own field names found, or the Client's
// used where the page does not show them; extra fields sent; a consent
// form answered (both shapes), every time or once, as the server asks.
func TestLoginOptions(t *testing.T) {
	tests := []struct {
		name     string
		refop    bool
		op       func(op *formlogintest.OP)
		client   func(c *Client)
		logins   int
		consents int // answered
		hops     []Hop
	}{
		{"fields found on the page", false, func(op *formlogintest.OP) {
			op.UserInput, op.PasswordInput = [2]string{"login", "email"}, [2]string{"pw", "password"}
		}, nil, 1, 0, []Hop{Authorize, Submit}},
		{"password input not typed password: named", true, func(op *formlogintest.OP) {
			op.PasswordInput = [2]string{"pin", "text"}
		}, func(c *Client) { c.UserField, c.PasswordField = "username", "pin" }, 1, 0, []Hop{Authorize, Page, Submit, Callback}},
		{"an extra field", false, func(op *formlogintest.OP) { op.Require = [2]string{"tenant", "acme"} },
			func(c *Client) { c.Fields = [][2]string{{"tenant", "acme"}} }, 1, 0, []Hop{Authorize, Submit}},
		{"consent in the submit's answer, every time", false, func(op *formlogintest.OP) { op.Consent = formlogintest.ConsentAlways },
			func(c *Client) { c.Consent = true }, 3, 3, []Hop{Authorize, Submit, Consent}},
		{"keycloak: consent behind a redirect", false, func(op *formlogintest.OP) {
			op.Consent, op.ConsentBehind = formlogintest.ConsentAlways, true
		}, func(c *Client) { c.Consent = true }, 2, 2, []Hop{Authorize, Submit, ConsentPage, Consent}},
		{"oidc-provider: consent behind a redirect, then a resume", true, func(op *formlogintest.OP) {
			op.Consent, op.ConsentBehind, op.Resume = formlogintest.ConsentAlways, true, true
		}, func(c *Client) { c.Consent = true }, 2, 2, []Hop{Authorize, Page, Submit, Callback, ConsentPage, Consent, Resume}},
		{"spring consent every time", true, func(op *formlogintest.OP) { op.Consent = formlogintest.ConsentAlways },
			func(c *Client) { c.Consent = true }, 3, 3, []Hop{Authorize, Page, Submit, Callback, Consent}},
		{"keycloak consent remembered", false, func(op *formlogintest.OP) { op.Consent = formlogintest.ConsentOnce },
			func(c *Client) { c.Consent = true }, 3, 1, []Hop{Authorize, Submit}},
		{"consent answered only where shown", true, nil, func(c *Client) { c.Consent = true }, 2, 0, []Hop{Authorize, Page, Submit, Callback}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := formlogintest.NewOP(t, tt.refop)
			if tt.op != nil {
				tt.op(op)
			}
			c := Client{AuthURL: op.Server.URL + "/auth", ClientID: formlogintest.ClientID, RedirectURI: formlogintest.RedirectURI,
				Scope: "openid", PageHop: tt.refop}
			if tt.client != nil {
				tt.client(&c)
			}
			f, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			var sent []Hop
			for i := range tt.logins {
				sent = nil
				cb, err := f.Login(recorded(t, &sent), "user1", formlogintest.Password)
				if err != nil || cb.Query().Get("code") == "" {
					t.Fatalf("login %d: callback %v, error %v", i, cb, err)
				}
			}
			if n := op.Logins()["user1"]; n != tt.logins || op.Consents() != tt.consents {
				t.Errorf("%d logins, %d consents answered; want %d, %d", n, op.Consents(), tt.logins, tt.consents)
			}
			if !slices.Equal(sent, tt.hops) {
				t.Errorf("the last login's hops %v, want %v", sent, tt.hops)
			}
		})
	}
}

// TestLoginOptionFailures: a page the login cannot fill, or a consent
// page where none is answered, ends the login at that hop, saying what.
func TestLoginOptionFailures(t *testing.T) {
	tests := []struct {
		name        string
		refop       bool
		op          func(op *formlogintest.OP)
		client      func(c *Client)
		password    string
		hop         Hop
		wrongStatus bool
		want        string
	}{
		{"no password input", true, func(op *formlogintest.OP) { op.PasswordInput = [2]string{"pin", "text"} }, nil, formlogintest.Password,
			Page, false, "/login/username: HTTP 200 page's form (action http://127.0.0.1:"},
		{"no user input before the password", false, func(op *formlogintest.OP) { op.UserInput = [2]string{"who", "number"} }, nil, formlogintest.Password,
			Authorize, false, "has no user name input (text or email) before its password input: name it (user field)"},
		{"consent not answered", false, func(op *formlogintest.OP) { op.Consent = formlogintest.ConsentAlways }, nil, formlogintest.Password,
			Submit, true, "/login-actions/authenticate (want a redirect): HTTP 200"},
		{"consent behind a redirect, not answered", false, func(op *formlogintest.OP) {
			op.Consent, op.ConsentBehind = formlogintest.ConsentAlways, true
		}, nil, formlogintest.Password, Submit, false, "/login-actions/authenticate: callback went to http://127.0.0.1:"},

		{"the login form again is no consent", false, nil, func(c *Client) { c.Consent = true }, "not-it",
			Submit, true, "/login-actions/authenticate (want a redirect): HTTP 200"},
		{"spring: the form again at the callback", true, func(op *formlogintest.OP) { op.Require = [2]string{"tenant", "acme"} },
			func(c *Client) { c.Consent = true }, formlogintest.Password, Submit, true, "/login/username (want a redirect): HTTP 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := formlogintest.NewOP(t, tt.refop)
			if tt.op != nil {
				tt.op(op)
			}
			c := Client{AuthURL: op.Server.URL + "/auth", ClientID: formlogintest.ClientID, RedirectURI: formlogintest.RedirectURI,
				Scope: "openid", PageHop: tt.refop}
			if tt.client != nil {
				tt.client(&c)
			}
			f, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			var sent []Hop
			_, err = f.Login(recorded(t, &sent), "user1", tt.password)
			e, ok := err.(*loginhop.Error)
			if !ok {
				t.Fatalf("error %v (%T), want a *loginhop.Error", err, err)
			}
			if e.Hop != tt.hop.String() || e.WrongStatus != tt.wrongStatus || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("hop %s wrong status %v: %q; want %s %v %q", e.Hop, e.WrongStatus, err, tt.hop, tt.wrongStatus, tt.want)
			}
			if last := sent[len(sent)-1]; last != tt.hop {
				t.Errorf("hops sent %v: the login went on after %s", sent, tt.hop)
			}
		})
	}
}

// TestConsentPageRefused: with Consent, a redirect that leads on to
// another redirect, where the consent page was wanted, fails the
// ConsentPage hop's check (never a login that ends without a failed
// request).
func TestConsentPageRefused(t *testing.T) {
	f, err := New(Client{AuthURL: "http://127.0.0.1:1/auth", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scope: "openid", Consent: true})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]*loginhop.Response{
		"/auth": {Status: 200, Header: http.Header{}, Body: []byte(formlogintest.KeycloakPage)},
		"/realms/bench/login-actions/authenticate": {Status: 302, Header: http.Header{"Location": {"/required-action"}}},
		"/required-action":                         {Status: 302, Header: http.Header{"Location": {"/elsewhere"}}},
	}
	var sent []Hop
	var verdicts []error
	_, err = f.Login(func(hop Hop, req *http.Request, check loginhop.Check) error {
		sent = append(sent, hop)
		r := answers[req.URL.Path]
		if r == nil {
			t.Fatalf("unexpected %s %s", req.Method, req.URL)
		}
		v := check(r)
		verdicts = append(verdicts, v)
		return v
	}, "user1", "pw")
	var e *loginhop.Error
	if !errors.As(err, &e) || e.Hop != "consent_page" || e.WrongStatus ||
		!strings.Contains(err.Error(), "GET http://127.0.0.1:8080/required-action: HTTP 302 redirect to http://127.0.0.1:8080/elsewhere where the consent page was wanted") {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(sent, []Hop{Authorize, Submit, ConsentPage}) || verdicts[2] == nil {
		t.Errorf("hops %v, verdicts %v: the consent page hop's own check must refuse", sent, verdicts)
	}
}
