package formlogin

import (
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
