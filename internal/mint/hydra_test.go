package mint

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/idpbench/idpbench/internal/login/adminaccept/adminaccepttest"
)

// fakeHydra is a public + admin server pair following Hydra's headless
// login/consent protocol, with a CSRF cookie per step. Accept bodies with
// unknown fields are rejected, as Hydra does.
type fakeHydra struct {
	t             *testing.T
	public, admin *httptest.Server
	badCookies    bool // cookies scoped to another path never come back: the missing-cookie path

	mu       sync.Mutex
	flows    map[string]*hydraReq // by challenge or verifier
	codes    map[string]*hydraReq
	subjects map[string]int
}

type hydraReq struct {
	state, scope, redirect string
	csrf                   string
	subject                string
	granted                []string
}

const hydraRedirect = "http://127.0.0.1/cb"

func newFakeHydra(t *testing.T, badCookies bool) *fakeHydra {
	h := &fakeHydra{t: t, badCookies: badCookies, flows: map[string]*hydraReq{}, codes: map[string]*hydraReq{}, subjects: map[string]int{}}
	pub := http.NewServeMux()
	pub.HandleFunc("GET /oauth2/auth", h.auth)
	pub.HandleFunc("POST /oauth2/token", h.token)
	adm := http.NewServeMux()
	adm.HandleFunc("PUT /admin/oauth2/auth/requests/login/accept", h.acceptLogin)
	adm.HandleFunc("PUT /admin/oauth2/auth/requests/consent/accept", h.acceptConsent)
	h.public, h.admin = httptest.NewServer(pub), httptest.NewServer(adm)
	pub.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"token_endpoint": h.public.URL + "/oauth2/token", "authorization_endpoint": h.public.URL + "/oauth2/auth"})
	})
	t.Cleanup(h.public.Close)
	t.Cleanup(h.admin.Close)
	return h
}

func (h *fakeHydra) put(key string, r *hydraReq) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flows[key] = r
}

func (h *fakeHydra) take(key string) *hydraReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.flows[key]
	delete(h.flows, key)
	return r
}

func (h *fakeHydra) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Has("login_verifier"):
		h.afterLogin(w, r, h.take(q.Get("login_verifier")))
	case q.Has("consent_verifier"):
		h.afterConsent(w, r, h.take(q.Get("consent_verifier")))
	default:
		h.start(w, r)
	}
}

func (h *fakeHydra) start(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != "hc" || q.Get("redirect_uri") != hydraRedirect || q.Get("response_type") != "code" {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	if len(q.Get("state")) < 8 {
		redirectErr(w, r, "invalid_state", "state too short")
		return
	}
	req := &hydraReq{state: q.Get("state"), scope: q.Get("scope"), redirect: q.Get("redirect_uri"), csrf: rand.Text()}
	ch := rand.Text()
	h.put("login:"+ch, req)
	h.setCSRF(w, "oauth2_authentication_csrf_x", req.csrf)
	http.Redirect(w, r, "http://login.invalid/login?login_challenge="+ch, http.StatusFound)
}

func (h *fakeHydra) setCSRF(w http.ResponseWriter, name, val string) {
	path := "/"
	if h.badCookies {
		path = "/elsewhere"
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: val, Path: path, HttpOnly: true})
}

func (h *fakeHydra) csrfOK(r *http.Request, name string, req *hydraReq) bool {
	c, err := r.Cookie(name)
	return err == nil && c.Value == req.csrf
}

func redirectErr(w http.ResponseWriter, r *http.Request, code, desc string) {
	v := url.Values{"error": {code}, "error_description": {desc}}
	http.Redirect(w, r, hydraRedirect+"?"+v.Encode(), http.StatusSeeOther)
}

func (h *fakeHydra) afterLogin(w http.ResponseWriter, r *http.Request, req *hydraReq) {
	if req == nil {
		redirectErr(w, r, "invalid_request", "unknown login verifier")
		return
	}
	if !h.csrfOK(r, "oauth2_authentication_csrf_x", req) {
		redirectErr(w, r, "request_forbidden", "The request is not allowed. No CSRF value available in the session cookie.")
		return
	}
	req.csrf = rand.Text()
	ch := rand.Text()
	h.put("consent:"+ch, req)
	h.setCSRF(w, "oauth2_consent_csrf_x", req.csrf)
	http.Redirect(w, r, "http://login.invalid/consent?consent_challenge="+ch, http.StatusFound)
}

func (h *fakeHydra) afterConsent(w http.ResponseWriter, r *http.Request, req *hydraReq) {
	if req == nil || !h.csrfOK(r, "oauth2_consent_csrf_x", req) {
		redirectErr(w, r, "request_forbidden", "The request is not allowed. No CSRF value available in the session cookie.")
		return
	}
	code := rand.Text()
	h.mu.Lock()
	h.codes[code] = req
	h.mu.Unlock()
	v := url.Values{"code": {code}, "state": {req.state}, "scope": {strings.Join(req.granted, " ")}}
	http.Redirect(w, r, req.redirect+"?"+v.Encode(), http.StatusSeeOther)
}

// decodeStrict decodes an accept body, refusing unknown fields like Hydra.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := adminaccepttest.Decode(r.Body, v); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "The request was malformed: "+err.Error())
		return false
	}
	return true
}

func (h *fakeHydra) acceptLogin(w http.ResponseWriter, r *http.Request) {
	var body adminaccepttest.LoginAccept
	if !decodeStrict(w, r, &body) {
		return
	}
	req := h.take("login:" + r.URL.Query().Get("login_challenge"))
	if req == nil || body.Subject == "" {
		oauthErr(w, http.StatusNotFound, "not_found", "Unable to locate the requested resource")
		return
	}
	req.subject = body.Subject
	v := rand.Text()
	h.put(v, req)
	json.NewEncoder(w).Encode(map[string]string{"redirect_to": h.public.URL + "/oauth2/auth?client_id=hc&login_verifier=" + v})
}

func (h *fakeHydra) acceptConsent(w http.ResponseWriter, r *http.Request) {
	var body adminaccepttest.ConsentAccept
	if !decodeStrict(w, r, &body) {
		return
	}
	req := h.take("consent:" + r.URL.Query().Get("consent_challenge"))
	if req == nil {
		oauthErr(w, http.StatusNotFound, "not_found", "Unable to locate the requested resource")
		return
	}
	req.granted = body.GrantScope
	v := rand.Text()
	h.put(v, req)
	json.NewEncoder(w).Encode(map[string]string{"redirect_to": h.public.URL + "/oauth2/auth?client_id=hc&consent_verifier=" + v})
}

func (h *fakeHydra) token(w http.ResponseWriter, r *http.Request) {
	id, sec, ok := r.BasicAuth()
	if !ok || id != "hc" || sec != "hydra-secret" {
		oauthErr(w, http.StatusUnauthorized, "invalid_client", "Client authentication failed")
		return
	}
	r.ParseForm()
	h.mu.Lock()
	req := h.codes[r.PostForm.Get("code")]
	delete(h.codes, r.PostForm.Get("code"))
	if req != nil {
		h.subjects[req.subject]++
	}
	h.mu.Unlock()
	if r.PostForm.Get("grant_type") != "authorization_code" || req == nil || r.PostForm.Get("redirect_uri") != req.redirect {
		oauthErr(w, http.StatusBadRequest, "invalid_grant", "The provided authorization grant is invalid")
		return
	}
	resp := map[string]any{"access_token": "hat-" + req.subject + "-" + rand.Text(), "expires_in": 3600, "token_type": "bearer"}
	if strings.Contains(" "+strings.Join(req.granted, " ")+" ", " offline_access ") {
		resp["refresh_token"] = "hrt-" + rand.Text()
	}
	json.NewEncoder(w).Encode(resp)
}

func hydraConfig(h *fakeHydra, out string) Config {
	cfg := baseConfig(h.public, out)
	cfg.Flow, cfg.TokenURL, cfg.Issuer = FlowAdminAccept, "", h.public.URL
	cfg.AdminURL, cfg.ClientID, cfg.ClientSecret = h.admin.URL, "hc", "hydra-secret"
	cfg.Scope, cfg.Users, cfg.N = "openid offline_access", 3, 12
	return cfg
}
