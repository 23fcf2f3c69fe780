package mint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/logsafe"
)

// hydraFlow is Ory Hydra's headless login/consent flow (products/hydra.md):
// the login and consent apps are replaced by PUTs to the admin API.
//
//  1. GET auth URL               -> 302 login URL ?login_challenge (login CSRF cookie)
//  2. PUT admin login/accept     -> redirect_to
//  3. GET redirect_to            -> 302 consent URL ?consent_challenge (consent CSRF cookie)
//  4. PUT admin consent/accept   -> redirect_to
//  5. GET redirect_to            -> 303 redirect_uri?code=...&state=...
//  6. POST token (authorization_code) with client auth
//
// Each flow has its own cookie jar: Hydra ties the challenges to CSRF
// cookies, and a missing cookie shows as error=request_forbidden in step 5.
type hydraFlow struct {
	authURL  string // with client_id, response_type, scope, redirect_uri; state is appended
	admin    string // admin base URL without trailing slash
	redirect string
	tokenURL string
	auth     clientAuth
	scopes   []string
	subject  string
	users    int
	emit     string
}

func newHydraLogin(cfg *Config, tokenURL, authURL string) (*hydraFlow, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint %q: %w", authURL, err)
	}
	q := u.Query()
	q.Set("client_id", cfg.ClientID)
	q.Set("response_type", "code")
	q.Set("scope", cfg.Scope)
	q.Set("redirect_uri", cfg.RedirectURI)
	u.RawQuery = q.Encode()
	return &hydraFlow{
		authURL:  u.String(),
		admin:    strings.TrimRight(cfg.AdminURL, "/"),
		redirect: cfg.RedirectURI,
		tokenURL: tokenURL,
		auth:     newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth),
		scopes:   strings.Fields(cfg.Scope),
		subject:  cfg.Subject,
		users:    cfg.Users,
		emit:     cfg.Emit,
	}, nil
}

// The accept bodies use only documented fields: Hydra rejects unknown ones.
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

func (f *hydraFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return credential{}, err
	}
	hc := *w.hc // shares the worker's transport (keep-alive), own cookie jar
	hc.Jar = jar
	state := rand.Text()

	loc, err := f.redirect1(ctx, w, &hc, f.authURL+"&state="+state, "login_challenge")
	if err != nil {
		return credential{}, err
	}
	next, err := f.accept(ctx, w, &hc, "login", loc, loginAccept{Subject: perUser(f.subject, i, f.users)})
	if err != nil {
		return credential{}, err
	}
	if loc, err = f.redirect1(ctx, w, &hc, next, "consent_challenge"); err != nil {
		return credential{}, err
	}
	body := consentAccept{GrantScope: f.scopes, GrantAudience: []string{}, Session: consentSession{IDToken: map[string]any{}}}
	if next, err = f.accept(ctx, w, &hc, "consent", loc, body); err != nil {
		return credential{}, err
	}
	if loc, err = f.redirect1(ctx, w, &hc, next, "code"); err != nil {
		return credential{}, err
	}
	return f.exchange(ctx, w, loc, state)
}

// redirect1 GETs target without following redirects and returns the value of
// the query parameter want in the Location. An error= in the Location (Hydra
// redirects errors to the client or its fallback page) is reported as such.
func (f *hydraFlow) redirect1(ctx context.Context, w *worker, hc *http.Client, target, want string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", fmt.Errorf("hydra-login: GET %s: %w", target, err)
	}
	resp, err := w.do(hc, req)
	if err != nil {
		return "", fmt.Errorf("hydra-login: %w", err)
	}
	op := "hydra-login: GET " + logsafe.URL(req.URL)
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return "", withOp(newHTTPError(req, resp.StatusCode, w.buf.Bytes()), op+" (want a redirect)")
	}
	loc, err := resp.Location()
	if err != nil {
		return "", fmt.Errorf("%s: HTTP %d: bad Location: %w", op, resp.StatusCode, err)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		return "", &HTTPError{Op: op + " -> " + logsafe.URL(loc), Code: logsafe.Text(e), Description: logsafe.Text(q.Get("error_description"))}
	}
	v := q.Get(want)
	if v == "" {
		return "", fmt.Errorf("%s: HTTP %d redirect to %s has no %s", op, resp.StatusCode, logsafe.URL(loc), want)
	}
	if want == "code" {
		return loc.String(), nil // exchange checks state and redirect target
	}
	return v, nil
}

func withOp(e *HTTPError, op string) *HTTPError {
	e.Op = op
	return e
}

// accept PUTs an accept body for a login or consent challenge to the admin
// API and returns the redirect_to the browser would follow.
func (f *hydraFlow) accept(ctx context.Context, w *worker, hc *http.Client, kind, challenge string, body any) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	target := f.admin + "/admin/oauth2/auth/requests/" + kind + "/accept?" + kind + "_challenge=" + url.QueryEscape(challenge)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("hydra-login: PUT %s accept: %w", kind, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := w.do(hc, req)
	if err != nil {
		return "", fmt.Errorf("hydra-login: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", withOp(newHTTPError(req, resp.StatusCode, w.buf.Bytes()), "hydra-login: PUT "+logsafe.URL(req.URL))
	}
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := json.Unmarshal(w.buf.Bytes(), &out); err != nil || out.RedirectTo == "" {
		return "", fmt.Errorf("hydra-login: PUT %s: HTTP 200 without redirect_to", logsafe.URL(req.URL))
	}
	return out.RedirectTo, nil
}

// exchange checks the callback (target and state) and trades the code for tokens.
func (f *hydraFlow) exchange(ctx context.Context, w *worker, callback, state string) (credential, error) {
	cb, err := url.Parse(callback)
	if err != nil {
		return credential{}, fmt.Errorf("hydra-login: bad callback URL: %w", err)
	}
	q := cb.Query()
	if q.Get("state") != state {
		return credential{}, fmt.Errorf("hydra-login: callback %s: state does not match the request", logsafe.URL(cb))
	}
	if !strings.HasPrefix(callback, f.redirect) {
		return credential{}, fmt.Errorf("hydra-login: callback went to %s, not --redirect-uri %s", logsafe.URL(cb), f.redirect)
	}
	form := url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {q.Get("code")},
		"redirect_uri": {f.redirect},
	}
	tr, err := w.postToken(ctx, w.hc, f.tokenURL, f.auth.encode(form), f.auth)
	if err != nil {
		return credential{}, fmt.Errorf("hydra-login: code exchange: %w", err)
	}
	return tr.pick(f.emit, time.Now())
}
