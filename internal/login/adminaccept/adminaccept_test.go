package adminaccept

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/loginhop"
)

const (
	authURL  = "http://hydra:4444/oauth2/auth"
	adminURL = "http://hydra:4445"
	redirect = "http://127.0.0.1/cb"
)

func testFlow(t *testing.T) *Flow { return testFlowAdmin(t, adminURL) }

func testFlowAdmin(t *testing.T, admin string) *Flow {
	t.Helper()
	f, err := New(Client{AuthURL: authURL, AdminURL: admin, ClientID: "bench-web", RedirectURI: redirect,
		Scope: "openid offline_access"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// script answers each hop as Hydra does, unless answer overrides it (STATE
// in its Location is the login's state); it checks every request the
// login sends.
type script struct {
	t      *testing.T
	answer map[Hop]*loginhop.Response
	sent   []Hop
	state  string
}

func redirectTo(status int, loc string) *loginhop.Response {
	return &loginhop.Response{Status: status, Header: http.Header{"Location": {loc}}}
}

func redirectJSON(status int, to string) *loginhop.Response {
	b, _ := json.Marshal(map[string]string{"redirect_to": to})
	return &loginhop.Response{Status: status, Header: http.Header{}, Body: b}
}

func (s *script) do(hop Hop, req *http.Request, check loginhop.Check) error {
	s.sent = append(s.sent, hop)
	s.checkRequest(hop, req)
	r := s.answer[hop]
	if r == nil {
		r = s.hydra(hop)
	} else if loc := r.Header.Get("Location"); strings.Contains(loc, "STATE") {
		c := *r
		c.Header = http.Header{"Location": {strings.ReplaceAll(loc, "STATE", url.QueryEscape(s.state))}}
		r = &c
	}
	return check(r)
}

func (s *script) hydra(hop Hop) *loginhop.Response {
	switch hop {
	case Authorize:
		return redirectTo(302, "http://login.invalid/login?login_challenge=LC")
	case AcceptLogin:
		return redirectJSON(200, "http://hydra:4444/oauth2/auth?client_id=bench-web&login_verifier=LV")
	case Verifier:
		return redirectTo(302, "http://login.invalid/consent?consent_challenge=CC")
	case AcceptConsent:
		return redirectJSON(200, "http://hydra:4444/oauth2/auth?client_id=bench-web&consent_verifier=CV")
	}
	return redirectTo(303, redirect+"?code=C0DE&scope=openid&state="+url.QueryEscape(s.state))
}

// checkRequest holds each hop's request to Hydra's protocol.
func (s *script) checkRequest(hop Hop, req *http.Request) {
	t := s.t
	t.Helper()
	q := req.URL.Query()
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	want := map[Hop]string{
		Authorize:     "GET http://hydra:4444/oauth2/auth",
		AcceptLogin:   "PUT http://hydra:4445/admin/oauth2/auth/requests/login/accept",
		Verifier:      "GET http://hydra:4444/oauth2/auth",
		AcceptConsent: "PUT http://hydra:4445/admin/oauth2/auth/requests/consent/accept",
		Callback:      "GET http://hydra:4444/oauth2/auth",
	}[hop]
	if got := req.Method + " " + req.URL.Scheme + "://" + req.URL.Host + req.URL.Path; got != want {
		t.Errorf("hop %d: %s, want %s", hop, got, want)
	}
	var bad bool
	switch hop {
	case Authorize:
		s.state = q.Get("state")
		bad = q.Get("client_id") != "bench-web" || q.Get("response_type") != "code" || q.Get("redirect_uri") != redirect ||
			q.Get("scope") != "openid offline_access" || len(s.state) < 8
	case AcceptLogin:
		bad = q.Get("login_challenge") != "LC" || string(body) != `{"subject":"user7","remember":false}`
	case Verifier:
		bad = q.Get("login_verifier") != "LV"
	case AcceptConsent:
		bad = q.Get("consent_challenge") != "CC" ||
			string(body) != `{"grant_scope":["openid","offline_access"],"grant_access_token_audience":[],"session":{"id_token":{}}}`
	case Callback:
		bad = q.Get("consent_verifier") != "CV"
	}
	if hop == AcceptLogin || hop == AcceptConsent {
		bad = bad || req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "application/json"
	}
	if bad || req.Context() == nil {
		t.Errorf("hop %d: %s %s %s %v", hop, req.Method, req.URL, body, req.Header)
	}
}

func TestLogin(t *testing.T) {
	// The admin URL with or without trailing slashes: the accept path is
	// the same.
	for _, admin := range []string{adminURL, adminURL + "/", adminURL + "//"} {
		s := &script{t: t}
		cb, err := testFlowAdmin(t, admin).Login(s.do, "user7")
		if err != nil {
			t.Fatalf("admin %s: %v", admin, err)
		}
		if q := cb.Query(); cb.Host != "127.0.0.1" || cb.Path != "/cb" || q.Get("code") != "C0DE" || q.Get("state") != s.state {
			t.Errorf("callback %s", cb)
		}
		if len(s.sent) != Hops {
			t.Errorf("hops sent %v, want all %d", s.sent, Hops)
		}
	}
}

// TestLoginFailures: each way a hop can fail ends the login there with an
// *Error that says which hop, whether the status was wrong (loadstep:
// non2xx outside 2xx, else a failed check) and, in words mintpool prints,
// what was wrong, never naming a challenge, verifier, state or code.
func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name        string
		hop         Hop
		answer      *loginhop.Response
		wrongStatus bool
		want        string // in Error()
	}{
		{"authorize answers 200", Authorize, &loginhop.Response{Status: 200, Header: http.Header{}}, true,
			"GET http://hydra:4444/oauth2/auth (want a redirect): HTTP 200"},
		{"authorize answers 400", Authorize, &loginhop.Response{Status: 400, Header: http.Header{}}, true, "(want a redirect): HTTP 400"},
		{"redirect without Location", Authorize, &loginhop.Response{Status: 302, Header: http.Header{}}, false,
			"HTTP 302: bad Location: http: no Location header in response"},
		{"Location that does not parse", Verifier, redirectTo(302, "http://[::1"), false, "bad Location"},
		{"error redirect", Authorize, redirectTo(303, redirect+"?error=invalid_scope&error_description=no+such+scope&state=S"), false,
			"GET http://hydra:4444/oauth2/auth -> http://127.0.0.1/cb: invalid_scope: no such scope"},
		{"no login_challenge", Authorize, redirectTo(302, "http://login.invalid/login?x=1"), false,
			"HTTP 302 redirect to http://login.invalid/login has no login_challenge"},
		{"no consent_challenge", Verifier, redirectTo(302, "http://login.invalid/consent"), false, "has no consent_challenge"},
		{"accept answers 404", AcceptLogin, &loginhop.Response{Status: 404, Header: http.Header{}, Body: []byte(`{"error":"not_found"}`)}, true,
			"PUT http://hydra:4445/admin/oauth2/auth/requests/login/accept: HTTP 404"},
		{"accept answers a redirect", AcceptConsent, redirectTo(302, "http://elsewhere/"), true, "consent/accept: HTTP 302"},
		{"accept without redirect_to", AcceptLogin, &loginhop.Response{Status: 200, Header: http.Header{}, Body: []byte(`{}`)}, false,
			"HTTP 200 without redirect_to"},
		{"accept with a relative redirect_to", AcceptConsent, redirectJSON(200, "/oauth2/auth?consent_verifier=CV"), false,
			"without redirect_to"},
		{"accept not JSON", AcceptLogin, &loginhop.Response{Status: 200, Header: http.Header{}, Body: []byte(`redirect_to`)}, false,
			"without redirect_to"},
		{"lost CSRF cookie", Callback, redirectTo(303, redirect+"?error=request_forbidden&error_description=No+CSRF+value&state=S"), false,
			"-> http://127.0.0.1/cb: request_forbidden: No CSRF value"},
		{"callback without code", Callback, redirectTo(303, redirect+"?state=STATE"), false, "redirect to http://127.0.0.1/cb has no code"},
		{"callback with another state", Callback, redirectTo(303, redirect+"?code=C&state=other-state"), false,
			"callback http://127.0.0.1/cb: state does not match the request"},
		{"callback elsewhere", Callback, redirectTo(303, "http://127.0.0.1/cbx?code=C&state=STATE"), false,
			"callback went to http://127.0.0.1/cbx, not --redirect-uri http://127.0.0.1/cb"},
		{"callback answers 200", Callback, &loginhop.Response{Status: 200, Header: http.Header{}}, true, "(want a redirect): HTTP 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{t: t, answer: map[Hop]*loginhop.Response{tt.hop: tt.answer}}
			_, err := testFlow(t).Login(s.do, "user7")
			var e *loginhop.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if e.Hop != tt.hop.String() || e.WrongStatus != tt.wrongStatus || e.Status != tt.answer.Status {
				t.Errorf("hop %s wrong status %v status %d; want %s %v %d", e.Hop, e.WrongStatus, e.Status,
					tt.hop, tt.wrongStatus, tt.answer.Status)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
			for _, leak := range []string{"challenge=", "verifier=", "state=", "code=", "LC", "C0DE"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q names %q", err, leak)
				}
			}
			if last := s.sent[len(s.sent)-1]; last != tt.hop {
				t.Errorf("hops sent %v: the login went on after hop %d", s.sent, tt.hop)
			}
		})
	}
}

// TestLoginRelativeLocation: a Location resolves against the request's
// URL, as a browser resolves it.
func TestLoginRelativeLocation(t *testing.T) {
	s := &script{t: t, answer: map[Hop]*loginhop.Response{Verifier: redirectTo(302, "/consent?consent_challenge=CC")}}
	if _, err := testFlow(t).Login(s.do, "user7"); err != nil {
		t.Fatal(err)
	}
}

// TestLoginAccept2xx: an accept answered with any 2xx and a redirect_to
// goes on.
func TestLoginAccept2xx(t *testing.T) {
	s := &script{t: t, answer: map[Hop]*loginhop.Response{
		AcceptLogin: redirectJSON(201, "http://hydra:4444/oauth2/auth?client_id=bench-web&login_verifier=LV")}}
	if _, err := testFlow(t).Login(s.do, "user7"); err != nil {
		t.Fatal(err)
	}
}

// TestLoginTransportError: what Do returns ends the login unchanged.
func TestLoginTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	var sent int
	_, err := testFlow(t).Login(func(Hop, *http.Request, loginhop.Check) error { sent++; return boom }, "u")
	if err != boom || sent != 1 {
		t.Errorf("error %v after %d requests, want %v after 1", err, sent, boom)
	}
}

func TestNew(t *testing.T) {
	for _, c := range []Client{{AuthURL: "http://[::1", AdminURL: adminURL, RedirectURI: redirect},
		{AuthURL: authURL, AdminURL: "http://[::1", RedirectURI: redirect}, {AuthURL: authURL, AdminURL: adminURL, RedirectURI: "http://[::1"}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted a URL that does not parse", c)
		}
	}
}
