package load

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idpbench/idpbench/internal/login/adminaccept/adminaccepttest"
)

// Fakes of the products' login flows, strict about what the real ones
// check: client authentication, cookies, state round trip, single-use
// codes and redirect URIs.

const (
	fakeClient   = "bench-svc"
	fakeSecret   = "s3cr3t"
	fakePassword = "pw-123"
	fakeRedirect = "http://127.0.0.1/cb"
)

// fakeOP holds what all fakes share: issued codes and counters.
type fakeOP struct {
	mu      sync.Mutex
	codes   map[string]bool   // issued, not yet exchanged
	pending map[string]string // challenge or request id -> state
	seq     atomic.Int64
	tokens  atomic.Int64 // successful code exchanges
	users   sync.Map     // user names seen at login
}

func newFakeOP() *fakeOP {
	return &fakeOP{codes: map[string]bool{}, pending: map[string]string{}}
}

func (f *fakeOP) id(prefix string) string { return fmt.Sprintf("%s%d", prefix, f.seq.Add(1)) }

func (f *fakeOP) remember(key, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending[key] = state
}

// take returns and forgets the state stored under key.
func (f *fakeOP) take(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.pending[key]
	delete(f.pending, key)
	return s, ok
}

// callback redirects to the client with a new code and the state.
func (f *fakeOP) callback(w http.ResponseWriter, r *http.Request, state string, status int) {
	code := f.id("code")
	f.mu.Lock()
	f.codes[code] = true
	f.mu.Unlock()
	http.Redirect(w, r, fakeRedirect+"?code="+code+"&state="+url.QueryEscape(state), status)
}

// checkAuthorize validates an authorization request; "" when it is fine.
func checkAuthorize(q url.Values) string {
	switch {
	case q.Get("client_id") != fakeClient, q.Get("response_type") != "code", q.Get("redirect_uri") != fakeRedirect:
		return "bad authorization request"
	case len(q.Get("state")) < 8:
		return "state too short"
	case !strings.Contains(q.Get("scope"), "openid"):
		return "no openid scope"
	}
	return ""
}

// token is the token endpoint: Basic client auth, a single-use code, the
// redirect URI again.
func (f *fakeOP) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	code := r.PostFormValue("code")
	f.mu.Lock()
	valid := f.codes[code]
	delete(f.codes, code)
	f.mu.Unlock()
	if !ok || id != fakeClient || secret != fakeSecret || r.PostFormValue("grant_type") != "authorization_code" ||
		!valid || r.PostFormValue("redirect_uri") != fakeRedirect {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	f.tokens.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"at-%s","token_type":"Bearer","id_token":"x.y.z"}`, code)
}

// fakeHydra is Hydra's public and admin API on two servers.
type fakeHydra struct {
	*fakeOP
	public, admin *httptest.Server
	dropConsent   bool // do not set the consent CSRF cookie (a lost cookie)
}

func newFakeHydra(t *testing.T) *fakeHydra {
	h := &fakeHydra{fakeOP: newFakeOP()}
	pub := http.NewServeMux()
	pub.HandleFunc("GET /oauth2/auth", h.auth)
	pub.HandleFunc("POST /oauth2/token", h.token)
	adm := http.NewServeMux()
	adm.HandleFunc("PUT /admin/oauth2/auth/requests/login/accept", h.acceptLogin)
	adm.HandleFunc("PUT /admin/oauth2/auth/requests/consent/accept", h.acceptConsent)
	h.public, h.admin = httptest.NewServer(pub), httptest.NewServer(adm)
	t.Cleanup(h.public.Close)
	t.Cleanup(h.admin.Close)
	return h
}

func (h *fakeHydra) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("login_verifier") != "":
		h.afterLogin(w, r, q.Get("login_verifier"))
	case q.Get("consent_verifier") != "":
		h.afterConsent(w, r, q.Get("consent_verifier"))
	default:
		if why := checkAuthorize(q); why != "" {
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		c := h.id("lc")
		h.remember(c, q.Get("state"))
		http.SetCookie(w, &http.Cookie{Name: "login_csrf", Value: c, Path: "/"})
		http.Redirect(w, r, "http://127.0.0.1:9/login?login_challenge="+c, http.StatusFound)
	}
}

func (h *fakeHydra) afterLogin(w http.ResponseWriter, r *http.Request, verifier string) {
	c := strings.TrimPrefix(verifier, "v-")
	state, ok := h.take("verified-" + c)
	if ck, err := r.Cookie("login_csrf"); !ok || err != nil || ck.Value != c {
		http.Redirect(w, r, fakeRedirect+"?error=request_forbidden&state="+url.QueryEscape(state), http.StatusSeeOther)
		return
	}
	cc := h.id("cc")
	h.remember(cc, state)
	if !h.dropConsent {
		http.SetCookie(w, &http.Cookie{Name: "consent_csrf", Value: cc, Path: "/"})
	}
	http.Redirect(w, r, "http://127.0.0.1:9/consent?consent_challenge="+cc, http.StatusFound)
}

func (h *fakeHydra) afterConsent(w http.ResponseWriter, r *http.Request, verifier string) {
	cc := strings.TrimPrefix(verifier, "v-")
	state, ok := h.take("verified-" + cc)
	if ck, err := r.Cookie("consent_csrf"); !ok || err != nil || ck.Value != cc {
		http.Redirect(w, r, fakeRedirect+"?error=request_forbidden&state="+url.QueryEscape(state), http.StatusSeeOther)
		return
	}
	h.callback(w, r, state, http.StatusSeeOther)
}

// accept decodes an accept body strictly (Hydra rejects unknown fields)
// and moves the challenge's state to its verifier.
func (h *fakeHydra) accept(w http.ResponseWriter, r *http.Request, kind string, body any) {
	c := r.URL.Query().Get(kind + "_challenge")
	state, ok := h.take(c)
	if err := adminaccepttest.Decode(r.Body, body); err != nil || !ok {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	h.remember("verified-"+c, state)
	fmt.Fprintf(w, `{"redirect_to":%q}`, h.public.URL+"/oauth2/auth?client_id="+fakeClient+"&"+kind+"_verifier=v-"+c)
}

func (h *fakeHydra) acceptLogin(w http.ResponseWriter, r *http.Request) {
	var b adminaccepttest.LoginAccept
	h.accept(w, r, "login", &b)
	h.users.Store(b.Subject, true)
}

func (h *fakeHydra) acceptConsent(w http.ResponseWriter, r *http.Request) {
	var b adminaccepttest.ConsentAccept
	h.accept(w, r, "consent", &b)
}

// fakeCC is a token endpoint for client_credentials and a userinfo
// endpoint that accepts only its own tokens.
type fakeCC struct {
	srv        *httptest.Server
	userStatus int  // userinfo status (0 = 200)
	noSub      bool // userinfo 200 without sub (Hydra with a client token)
	userinfo   atomic.Int64
}

func newFakeCC(t *testing.T) *fakeCC {
	f := &fakeCC{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != fakeClient || secret != fakeSecret || r.PostFormValue("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"access_token":"good-token","token_type":"Bearer","expires_in":300}`)
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-token" {
			http.Error(w, "{}", http.StatusUnauthorized)
			return
		}
		f.userinfo.Add(1)
		switch {
		case f.userStatus != 0:
			w.WriteHeader(f.userStatus)
			fmt.Fprint(w, "{}")
		case f.noSub:
			fmt.Fprint(w, `{"iss":"x"}`)
		default:
			fmt.Fprint(w, `{"sub":"service-account"}`)
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// fakeZitadel answers the Session API login the way Zitadel v4 does, with
// the request and response shapes of its documentation:
//   - authorize with x-zitadel-login-client: a V2 auth request and a 302 to
//     the login UI's /login?authRequest=V2_<id> (guides/integrate/login-ui/
//     oidc-standard; internal/api/oidc/auth_request.go, CreateAuthRequest);
//   - POST /v2/sessions (session_service_v2 CreateSession): body
//     {"checks":{"user":{"loginName"},"password":{"password"}}}, answer 201
//     {"details":{"sequence","changeDate","resourceOwner"},"sessionId","sessionToken"};
//     a wrong password answers 400 {"code":3,"message":"Errors.User.Password.Invalid",...};
//   - POST /v2/oidc/auth_requests/{id} (oidc_service_v2 CreateCallback):
//     body {"session":{"sessionId","sessionToken"}}, answer 200
//     {"details":{...},"callbackUrl":"<redirect_uri>?code=...&state=..."}.
//
// Both API calls must carry the login client's Bearer token; authorize
// without the header would start a login v1 flow (here: 400).
type fakeZitadel struct {
	*fakeOP
	srv         *httptest.Server
	loginClient string
	pat         string   // the login client's token
	badState    bool     // the callback URL carries another state
	sessions    sync.Map // session id -> session token
	sessionUser sync.Map // session id -> login name
}

const (
	fakeZitadelLoginClient = "312909075212468632"
	fakeZitadelPAT         = "pat-Zx9"
)

func newFakeZitadel(t *testing.T) *fakeZitadel {
	z := &fakeZitadel{fakeOP: newFakeOP(), loginClient: fakeZitadelLoginClient, pat: fakeZitadelPAT}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/v2/authorize", z.authorize)
	mux.HandleFunc("POST /v2/sessions", z.createSession)
	mux.HandleFunc("POST /v2/oidc/auth_requests/{id}", z.createCallback)
	mux.HandleFunc("POST /oauth/v2/token", z.token)
	z.srv = httptest.NewServer(mux)
	t.Cleanup(z.srv.Close)
	return z
}

func (z *fakeZitadel) zitadelError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":%d,"message":%q,"details":[{"@type":"type.googleapis.com/zitadel.v1.ErrorDetail","id":"TEST-1","message":%q}]}`, code, msg, msg)
}

func (z *fakeZitadel) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if msg := checkAuthorize(q); msg != "" || r.Header.Get("x-zitadel-login-client") != z.loginClient {
		http.Error(w, "login v1 or bad request: "+msg, http.StatusBadRequest)
		return
	}
	id := z.id("V2_")
	z.remember(id, q.Get("state"))
	http.Redirect(w, r, "/ui/v2/login/login?authRequest="+id, http.StatusFound)
}

// authorized checks the login client's token and the JSON content type.
func (z *fakeZitadel) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+z.pat {
		z.zitadelError(w, http.StatusUnauthorized, 16, "auth header missing")
		return false
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		z.zitadelError(w, http.StatusBadRequest, 3, "content type")
		return false
	}
	return true
}

func (z *fakeZitadel) createSession(w http.ResponseWriter, r *http.Request) {
	if !z.authorized(w, r) {
		return
	}
	var body struct {
		Checks struct {
			User     struct{ LoginName string } `json:"user"`
			Password struct{ Password string }  `json:"password"`
		} `json:"checks"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Checks.User.LoginName == "" {
		z.zitadelError(w, http.StatusBadRequest, 3, "invalid CreateSessionRequest")
		return
	}
	if body.Checks.Password.Password != fakePassword {
		z.zitadelError(w, http.StatusBadRequest, 3, "Errors.User.Password.Invalid")
		return
	}
	id := z.id("3142")
	z.sessions.Store(id, "tok-"+id)
	z.sessionUser.Store(id, body.Checks.User.LoginName)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"details":{"sequence":"2","changeDate":"2026-11-30T10:00:00Z","resourceOwner":"3128"},"sessionId":%q,"sessionToken":%q}`, id, "tok-"+id)
}

func (z *fakeZitadel) createCallback(w http.ResponseWriter, r *http.Request) {
	if !z.authorized(w, r) {
		return
	}
	var body struct {
		Session struct{ SessionID, SessionToken string } `json:"session"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		z.zitadelError(w, http.StatusBadRequest, 3, "invalid CreateCallbackRequest")
		return
	}
	tok, ok := z.sessions.Load(body.Session.SessionID)
	if !ok || tok != body.Session.SessionToken {
		z.zitadelError(w, http.StatusForbidden, 7, "Errors.Session.Token.Invalid")
		return
	}
	state, ok := z.take(r.PathValue("id"))
	if !ok {
		z.zitadelError(w, http.StatusNotFound, 5, "Errors.AuthRequest.NotExisting")
		return
	}
	if z.badState {
		state += "x"
	}
	user, _ := z.sessionUser.Load(body.Session.SessionID)
	z.users.Store(user, true)
	code := z.id("code")
	z.mu.Lock()
	z.codes[code] = true
	z.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"details":{"sequence":"3","changeDate":"2026-11-30T10:00:01Z","resourceOwner":"3128"},"callbackUrl":%q}`,
		fakeRedirect+"?code="+code+"&state="+url.QueryEscape(state))
}
