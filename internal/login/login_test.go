package login

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// TestRequests: each protocol's hops by their request names, in the order
// sent, as loadstep records them.
func TestRequests(t *testing.T) {
	c := Config{AuthURL: "http://127.0.0.1:1/auth", ClientID: "web", RedirectURI: "http://127.0.0.1/cb", Scope: "openid",
		AdminURL: "http://127.0.0.1:2", LoginClient: "1", LoginClientToken: "pat"}
	for _, tt := range []struct {
		protocol string
		want     []string
	}{
		{AdminAccept, []string{NameAuthorize, NameAccept, NameVerifier, NameConsent, NameCallback}},
		{Form, []string{NameAuthorize, NameSubmit}},
		{FormPage, []string{NameAuthorize, NameLoginForm, NameSubmit, NameCallback}},
		{Form + " with consent", []string{NameAuthorize, NameSubmit, NameConsentPage, NameConsent, NameResume}},
		{SessionAPI, []string{NameAuthorize, NameSession, NameFinalize}},
	} {
		protocol, consent := strings.CutSuffix(tt.protocol, " with consent")
		c := c
		c.Form.Consent = consent
		f, err := New(protocol, c)
		if err != nil {
			t.Fatalf("%s: %v", tt.protocol, err)
		}
		if got := f.Requests(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: requests %v, want %v", tt.protocol, got, tt.want)
		}
		// The first hop goes out under its name, and the login ends with what Do returned.
		boom := errors.New("refused")
		var sent []string
		_, err = f.Login(func(name string, _ *http.Request, _ loginhop.Check) error { sent = append(sent, name); return boom }, "u", "p")
		if err != boom || !slices.Equal(sent, []string{NameAuthorize}) {
			t.Errorf("%s: sent %v, error %v; want %s and %v", tt.protocol, sent, err, NameAuthorize, boom)
		}
	}
	if !slices.Equal(Protocols(), []string{AdminAccept, Form, FormPage, SessionAPI}) {
		t.Errorf("Protocols() = %v", Protocols())
	}
}

// TestLoginNames: a whole login sends its hops under the names Requests
// gives, in that order (both form shapes, against formlogintest's OP).
func TestLoginNames(t *testing.T) {
	for _, protocol := range []string{Form, FormPage} {
		op := formlogintest.NewOP(t, protocol == FormPage)
		f, err := New(protocol, Config{AuthURL: op.Server.URL + "/auth", ClientID: formlogintest.ClientID,
			RedirectURI: formlogintest.RedirectURI, Scope: "openid"})
		if err != nil {
			t.Fatal(err)
		}
		do := formlogintest.Do[string](context.Background())
		var sent []string
		cb, err := f.Login(func(name string, req *http.Request, check loginhop.Check) error {
			sent = append(sent, name)
			return do(name, req, check)
		}, "user1", formlogintest.Password)
		if err != nil || cb.Query().Get("code") == "" {
			t.Fatalf("%s: callback %v, error %v", protocol, cb, err)
		}
		if !slices.Equal(sent, f.Requests()) {
			t.Errorf("%s: sent %v, want %v", protocol, sent, f.Requests())
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tt := range []struct {
		protocol string
		c        Config
		want     string
	}{
		{"sso", Config{}, `unknown login protocol "sso" (want admin-accept, form, form-page, session-api)`},
		{Form, Config{AuthURL: "http://[::1", RedirectURI: "http://127.0.0.1/cb"}, "authorization endpoint"},
		{AdminAccept, Config{AuthURL: "http://127.0.0.1/auth", RedirectURI: "http://127.0.0.1/cb", AdminURL: "http://[::1"}, "admin URL"},
		{SessionAPI, Config{AuthURL: "http://127.0.0.1/auth", RedirectURI: "http://127.0.0.1/cb", AdminURL: "http://[::1"}, "API URL"},
		{AdminAccept, Config{AuthURL: "http://127.0.0.1/auth", RedirectURI: "http://127.0.0.1/cb", AdminURL: "http://127.0.0.1:2",
			Form: FormOptions{Consent: true}}, "login protocol admin-accept fills no HTML form"},
	} {
		if _, err := New(tt.protocol, tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s): error %v, want %q", tt.protocol, err, tt.want)
		}
	}
}

func TestAuthPath(t *testing.T) {
	for protocol, want := range map[string]string{AdminAccept: "/oauth2/auth", SessionAPI: "/oauth/v2/authorize", Form: "", FormPage: ""} {
		if got := AuthPath(protocol); got != want {
			t.Errorf("AuthPath(%s) = %q, want %q", protocol, got, want)
		}
	}
}

func TestParseField(t *testing.T) {
	for in, want := range map[string][2]string{"tenant=acme": {"tenant", "acme"}, "a=": {"a", ""}, "x=y=z": {"x", "y=z"}} {
		if got, err := ParseField(in); err != nil || got != want {
			t.Errorf("ParseField(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "=v", "novalue"} {
		if _, err := ParseField(in); err == nil {
			t.Errorf("ParseField(%q) accepted", in)
		}
	}
}
