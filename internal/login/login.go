// Package login is the login protocols of the auth_code scenario and of the
// pools minted through a login, keyed by the name loadstep's --login and
// mintpool's --flow take: the one place the engine (internal/load,
// internal/mint) builds a login from. Each protocol is a package below this
// one, built on internal/loginhop:
//
//	admin-accept  Ory Hydra's login and consent accepted through its admin API (adminaccept)
//	form          the authorization request answers an HTML login form (formlogin: Keycloak's theme)
//	form-page     the login form behind a redirect, then a callback hop (formlogin: the reference OP,
//	              Spring Authorization Server, node oidc-provider)
//	session-api   a login UI's Session API (sessionapi: Zitadel's v2)
//
// A Flow names its hops' requests (loadstep records each under its name)
// and logs a user in, returning the callback URL, checked; the caller sends
// the requests (Do) with one cookie jar per login, follows no redirect and
// exchanges the code. No product's package is imported here or below.
package login

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/login/adminaccept"
	"github.com/idpbench/idpbench/internal/login/formlogin"
	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// The protocols, by the name the tools take.
const (
	AdminAccept = "admin-accept"
	Form        = "form"
	FormPage    = "form-page"
	SessionAPI  = "session-api"
)

// Protocols are the names New knows, in the order the tools list them.
func Protocols() []string { return []string{AdminAccept, Form, FormPage, SessionAPI} }

// The request names of the hops, as loadstep records them (request_order,
// requests_by_name; Zitadel's k6 trends call them so).
const (
	NameAuthorize = "login_authorize" // GET the authorization endpoint
	NameLoginForm = "login_form"      // GET the login page the authorize request redirected to
	NameSubmit    = "login_submit"    // POST the login form with the user's name and password
	NameCallback  = "login_callback"  // the hop whose response redirects to redirect_uri?code=
	NameAccept    = "login_accept"    // Hydra: PUT admin .../login/accept
	NameVerifier  = "login_verifier"  // Hydra: GET the authorize URL with the login_verifier
	NameConsent   = "login_consent"   // Hydra: PUT admin .../consent/accept; a form login: POST the consent form
	// A form login's consent page behind a redirect (Keycloak's required
	// action), and the redirect after the consent that is not yet the
	// client's (node oidc-provider's resume): sent only where the server
	// asks for consent so.
	NameConsentPage = "login_consent_page"
	NameResume      = "login_resume"
	NameSession     = "login_session"  // Zitadel: POST /v2/sessions with the user and password checks
	NameFinalize    = "login_finalize" // Zitadel: POST /v2/oidc/auth_requests/{id} with the session
)

// Config is what a login needs of the client and the server; each protocol
// reads the fields its doc names.
type Config struct {
	AuthURL     string // the authorization endpoint
	ClientID    string
	RedirectURI string // the client's registered redirect URI, where the login ends
	Scope       string // space-separated
	// AdminURL: admin-accept, Hydra's admin API base URL; session-api,
	// the instance's base URL, below which its Session API is.
	AdminURL string
	// session-api: the login client's user id (the header's value) and its
	// token (a secret, never in an error).
	LoginClient, LoginClientToken string
	Form                          FormOptions // form, form-page
}

// FormOptions are what a form login may be told of a page: the login
// form's field names where the page does not show them ("": its own),
// fields sent beside them, and whether a consent form is answered (the
// hop login_consent, sent when the server shows its page).
type FormOptions struct {
	UserField, PasswordField string
	Fields                   [][2]string // name, value
	Consent                  bool
}

// IsZero reports whether o asks for nothing.
func (o FormOptions) IsZero() bool {
	return o.UserField == "" && o.PasswordField == "" && len(o.Fields) == 0 && !o.Consent
}

// ParseField reads a --login-field value, NAME=VALUE (VALUE may be empty).
func ParseField(s string) ([2]string, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return [2]string{}, fmt.Errorf("%q: want NAME=VALUE", s)
	}
	return [2]string{name, value}, nil
}

// Do sends req as the request named name (one of the Flow's Requests)
// without following a redirect, reads the whole response and returns
// check's verdict on it, or the transport error; req has no context. Any
// error ends the login, which returns it unchanged.
type Do func(name string, req *http.Request, check loginhop.Check) error

// Flow is a client's login by one protocol, safe for concurrent use.
type Flow interface {
	// Requests are the request names of its hops in the order sent.
	Requests() []string
	// Login logs user in with password (admin-accept: user is the subject,
	// no password) and returns the callback URL, checked: the client's
	// redirect URI with a code, the login's state and no error.
	Login(do Do, user, password string) (*url.URL, error)
}

// New checks the client's URLs and returns its login by protocol; form
// options are for the form logins only.
func New(protocol string, c Config) (Flow, error) {
	if !c.Form.IsZero() && (protocol == AdminAccept || protocol == SessionAPI) {
		return nil, fmt.Errorf("login protocol %s fills no HTML form: the form options are for %s and %s", protocol, Form, FormPage)
	}
	switch protocol {
	case AdminAccept:
		f, err := adminaccept.New(adminaccept.Client{AuthURL: c.AuthURL, AdminURL: c.AdminURL,
			ClientID: c.ClientID, RedirectURI: c.RedirectURI, Scope: c.Scope})
		if err != nil {
			return nil, err
		}
		return hops[adminaccept.Hop]{names: adminAcceptNames[:], order: adminAcceptOrder(),
			login: func(do loginhop.Do[adminaccept.Hop], user, _ string) (*url.URL, error) { return f.Login(do, user) }}, nil
	case Form, FormPage:
		f, err := formlogin.New(formlogin.Client{AuthURL: c.AuthURL, ClientID: c.ClientID,
			RedirectURI: c.RedirectURI, Scope: c.Scope, PageHop: protocol == FormPage,
			UserField: c.Form.UserField, PasswordField: c.Form.PasswordField, Fields: c.Form.Fields, Consent: c.Form.Consent})
		if err != nil {
			return nil, err
		}
		return hops[formlogin.Hop]{names: formNames[:], order: f.Hops(), login: f.Login}, nil
	case SessionAPI:
		f, err := sessionapi.NewFlow(sessionapi.FlowConfig{AuthURL: c.AuthURL, APIURL: c.AdminURL,
			ClientID: c.ClientID, RedirectURI: c.RedirectURI, Scope: c.Scope,
			LoginClient: c.LoginClient, Token: c.LoginClientToken})
		if err != nil {
			return nil, err
		}
		return hops[sessionapi.Hop]{names: sessionNames[:], order: sessionOrder(), login: f.Login}, nil
	}
	return nil, fmt.Errorf("unknown login protocol %q (want %s)", protocol, strings.Join(Protocols(), ", "))
}

// AuthPath is protocol's authorization endpoint below the issuer, for a
// caller whose discovery document names none: Hydra's and Zitadel's fixed
// paths; "" for the others (a form's endpoint must be named or discovered).
func AuthPath(protocol string) string {
	switch protocol {
	case AdminAccept:
		return adminaccept.AuthPath
	case SessionAPI:
		return sessionapi.AuthorizePath
	}
	return ""
}

// hops is a protocol's Flow: its hops H sent under their request names.
type hops[H ~int] struct {
	names []string // the request name of each hop
	order []H      // the hops in the order sent
	login func(do loginhop.Do[H], user, password string) (*url.URL, error)
}

func (f hops[H]) Requests() []string {
	names := make([]string, len(f.order))
	for i, h := range f.order {
		names[i] = f.names[h]
	}
	return names
}

func (f hops[H]) Login(do Do, user, password string) (*url.URL, error) {
	return f.login(func(h H, req *http.Request, check loginhop.Check) error { return do(f.names[h], req, check) }, user, password)
}

var (
	adminAcceptNames = [adminaccept.Hops]string{adminaccept.Authorize: NameAuthorize, adminaccept.AcceptLogin: NameAccept,
		adminaccept.Verifier: NameVerifier, adminaccept.AcceptConsent: NameConsent, adminaccept.Callback: NameCallback}
	formNames = [...]string{formlogin.Authorize: NameAuthorize, formlogin.Page: NameLoginForm,
		formlogin.Submit: NameSubmit, formlogin.Callback: NameCallback, formlogin.ConsentPage: NameConsentPage,
		formlogin.Consent: NameConsent, formlogin.Resume: NameResume}
	sessionNames = [sessionapi.Hops]string{sessionapi.Authorize: NameAuthorize, sessionapi.CreateSession: NameSession,
		sessionapi.CreateCallback: NameFinalize}
)

func adminAcceptOrder() []adminaccept.Hop {
	order := make([]adminaccept.Hop, adminaccept.Hops)
	for i := range order {
		order[i] = adminaccept.Hop(i)
	}
	return order
}

func sessionOrder() []sessionapi.Hop {
	order := make([]sessionapi.Hop, sessionapi.Hops)
	for i := range order {
		order[i] = sessionapi.Hop(i)
	}
	return order
}
