package formlogintest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The client and the user that OP knows.
const (
	ClientID     = "web"
	ClientSecret = "web-secret"
	RedirectURI  = "http://127.0.0.1/cb"
	Password     = "pw-123" // every user's; a user's name starts with "user"
)

// OP is a fake of the products behind formlogin, as strict as they are
// about what a login sends: the client, the state round trip, cookies,
// the form's hidden fields, single-use codes, the redirect URI again and
// the client's Basic auth at the token endpoint. Its shapes:
//
//   - Keycloak (refop false): GET /auth answers 200 with the login form,
//     tied to an AUTH_SESSION_ID cookie (Secure even over http, as Keycloak
//     sets it), whose absolute action carries session_code, execution and
//     client_id, &amp;-escaped; POST /login-actions/authenticate redirects
//     to the client with the code.
//   - the reference OP (refop true): GET /auth redirects to GET
//     /login/username?authRequestID=, the form with a hidden id and a
//     relative action; POST /login/username redirects to GET
//     /authorize/callback?id=, which redirects to the client with the code.
//
// A wrong password or an unknown user answers 200 with the form again. The
// discovery document names /auth and /token.
//
// With Consent, a user's login asks for consent (every time, or the first
// time: ConsentOnce), where the login would redirect to the client: in
// Keycloak's shape the submit answers 200 with its consent form (a hidden
// code, submit controls accept and cancel; POST /login-actions/consent
// wants accept), in the reference OP's the callback answers 200 with a
// consent form in Spring's shape (a hidden id, scope checkboxes, one
// checked, a button without a name; POST /consent wants exactly the
// checked scope).
type OP struct {
	Server  *httptest.Server
	Refop   bool
	BadPage bool  // the login form is a GET form: the page has no login form
	FailNth int64 // every FailNth token request answers 500 (0: never)
	// UserInput and PasswordInput are the login form's inputs, name and
	// type ("": username, text; password, password).
	UserInput, PasswordInput [2]string
	Require                  [2]string // a field the submit must carry, name and value ("": none)
	Consent                  int       // ConsentNever, ConsentAlways, ConsentOnce
	// ConsentBehind: the consent page is behind a redirect (GET
	// /consent-page?id=, Keycloak's required action); Resume: the consent
	// redirects to GET /resume?id=, which redirects to the client (node
	// oidc-provider's shape).
	ConsentBehind, Resume bool

	mu        sync.Mutex
	seq       int
	pending   map[string]string // request id -> state
	submitted map[string]string // request id -> user, between the submit and the callback (refop)
	codes     map[string]string // code -> user: issued, not yet exchanged
	logins    map[string]int    // completed logins by user
	consented map[string]bool   // users who gave consent
	consents  int               // consent forms answered
	tokenReqs int64
	exchanged int64
}

// When OP asks for consent.
const (
	ConsentNever  = iota
	ConsentAlways // every login
	ConsentOnce   // a user's first login only (the server remembers it)
)

// NewOP starts an OP of the reference OP's shape (refop) or Keycloak's,
// stopped when the test ends.
func NewOP(t testing.TB, refop bool) *OP {
	f := &OP{Refop: refop, pending: map[string]string{}, submitted: map[string]string{},
		codes: map[string]string{}, logins: map[string]int{}, consented: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth", f.auth)
	mux.HandleFunc("POST /login-actions/authenticate", f.submit)
	mux.HandleFunc("GET /login/username", f.page)
	mux.HandleFunc("POST /login/username", f.submit)
	mux.HandleFunc("GET /authorize/callback", f.callback)
	mux.HandleFunc("POST /login-actions/consent", f.consent)
	mux.HandleFunc("POST /consent", f.consent)
	mux.HandleFunc("GET /consent-page", func(w http.ResponseWriter, r *http.Request) { f.consentPage(w, r.URL.Query().Get("id")) })
	mux.HandleFunc("GET /resume", func(w http.ResponseWriter, r *http.Request) { f.redirectWithCode(w, r, r.URL.Query().Get("id")) })
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"authorization_endpoint": f.Server.URL + "/auth",
			"token_endpoint": f.Server.URL + "/token"})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Server.Close)
	return f
}

// Logins are the completed logins by user.
func (f *OP) Logins() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := make(map[string]int, len(f.logins))
	for u, n := range f.logins {
		m[u] = n
	}
	return m
}

// Consents is how many consent forms were answered.
func (f *OP) Consents() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.consents
}

// Exchanged is how many codes the token endpoint exchanged.
func (f *OP) Exchanged() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exchanged
}

// newID is a new request id or code; f.mu held.
func (f *OP) newID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%d", prefix, f.seq)
}

func (f *OP) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != ClientID, q.Get("response_type") != "code", q.Get("redirect_uri") != RedirectURI:
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	case len(q.Get("state")) < 8, !strings.Contains(q.Get("scope"), "openid"):
		http.Error(w, "state too short or no openid scope", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	id := f.newID("req")
	f.pending[id] = q.Get("state")
	f.mu.Unlock()
	if f.Refop {
		http.Redirect(w, r, "/login/username?authRequestID="+id, http.StatusFound)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "AUTH_SESSION_ID", Value: id, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteNoneMode})
	f.render(w, f.Server.URL+"/login-actions/authenticate?session_code="+id+"&amp;execution=e1&amp;client_id="+ClientID,
		"credentialId", "")
}

func (f *OP) page(w http.ResponseWriter, r *http.Request) {
	f.render(w, "/login/username", "id", r.URL.Query().Get("authRequestID"))
}

// render writes the login page: a search form first (not the login form),
// then the login form with action (written as is) and one hidden field.
func (f *OP) render(w http.ResponseWriter, action, hidden, value string) {
	method := "post"
	if f.BadPage {
		method = "get"
	}
	user, pwd := f.inputs()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!DOCTYPE html><html><body><form id="search" action="/search"><input name=q></form>
<form id="kc-form-login" onsubmit="login.disabled = true; return true;" action="%s" method="%s">
<input tabindex="1" id="username" name="%s" value="" type="%s" autofocus>
<input tabindex="2" id="password" name="%s" type="%s">
<input type="hidden" id="id-hidden-input" name="%s" value="%s"/>
<input type=submit value="Sign In"></form></body></html>`, action, method, user[0], user[1], pwd[0], pwd[1], hidden, value)
}

// inputs are the login form's user and password inputs, name and type.
func (f *OP) inputs() (user, pwd [2]string) {
	user, pwd = f.UserInput, f.PasswordInput
	if user[0] == "" {
		user = [2]string{"username", "text"}
	}
	if pwd[0] == "" {
		pwd = [2]string{"password", "password"}
	}
	return user, pwd
}

func (f *OP) submit(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	if !f.Refop {
		ck, err := r.Cookie("AUTH_SESSION_ID")
		q := r.URL.Query()
		if err != nil || ck.Value != q.Get("session_code") || q.Get("execution") != "e1" || !r.PostForm.Has("credentialId") {
			http.Error(w, "session expired", http.StatusBadRequest)
			return
		}
		id = ck.Value
	}
	userIn, pwdIn := f.inputs()
	user := r.PostFormValue(userIn[0])
	if r.PostFormValue(pwdIn[0]) != Password || !strings.HasPrefix(user, "user") ||
		(f.Require[0] != "" && r.PostFormValue(f.Require[0]) != f.Require[1]) {
		f.render(w, r.URL.Path, "id", id) // 200: the form again
		return
	}
	f.mu.Lock()
	f.logins[user]++
	f.submitted[id] = user
	f.mu.Unlock()
	if f.Refop {
		http.Redirect(w, r, "/authorize/callback?id="+url.QueryEscape(id), http.StatusFound)
		return
	}
	f.redirectOrConsent(w, r, id)
}

func (f *OP) callback(w http.ResponseWriter, r *http.Request) {
	f.redirectOrConsent(w, r, r.URL.Query().Get("id"))
}

// redirectOrConsent ends the login of request id, or asks for consent
// first.
func (f *OP) redirectOrConsent(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	user := f.submitted[id]
	ask := f.Consent == ConsentAlways || (f.Consent == ConsentOnce && !f.consented[user])
	f.mu.Unlock()
	switch {
	case !ask:
		f.redirectWithCode(w, r, id)
	case f.ConsentBehind:
		http.Redirect(w, r, "/consent-page?id="+url.QueryEscape(id), http.StatusFound)
	default:
		f.consentPage(w, id)
	}
}

// consentPage writes the consent form of request id.
func (f *OP) consentPage(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if f.Refop { // Spring's shape
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><h1>Consent required</h1>
<form name="consent_form" method="post" action="/consent"><input type="hidden" name="id" value="%s">
<input class="form-check-input" type="checkbox" name="scope" value="profile" id="profile" checked>
<input class="form-check-input" type="checkbox" name="scope" value="email" id="email">
<button class="btn" type="submit" id="submit-consent">Submit Consent</button>
<button class="btn" type="button" id="cancel-consent" onclick="cancelConsent();">Cancel</button></form></body></html>`, id)
		return
	}
	fmt.Fprintf(w, `<!DOCTYPE html><html><body><h1>Do you grant these access privileges?</h1>
<form class="form-actions" action="/login-actions/consent?session_code=%s" method="POST">
<input type="hidden" name="code" value="%s">
<input name="accept" id="kc-login" type="submit" value="Yes"><input name="cancel" id="kc-cancel" type="submit" value="No">
</form></body></html>`, id, id)
}

// consent takes a consent form's answer: Keycloak's wants accept (not
// cancel), Spring's the checked scope only.
func (f *OP) consent(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("code")
	ok := r.PostForm.Has("accept") && !r.PostForm.Has("cancel") && r.URL.Query().Get("session_code") == id
	if f.Refop {
		id = r.PostFormValue("id")
		ok = strings.Join(r.PostForm["scope"], " ") == "profile" && len(r.PostForm) == 2
	}
	if !ok {
		http.Error(w, "consent denied", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.consented[f.submitted[id]] = true
	f.consents++
	f.mu.Unlock()
	if f.Resume {
		http.Redirect(w, r, "/resume?id="+url.QueryEscape(id), http.StatusSeeOther)
		return
	}
	f.redirectWithCode(w, r, id)
}

// redirectWithCode ends the login of request id: a redirect to the client
// with a new code and the request's state.
func (f *OP) redirectWithCode(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	state, ok := f.pending[id]
	user := f.submitted[id]
	delete(f.pending, id)
	delete(f.submitted, id)
	code := f.newID("code")
	if ok {
		f.codes[code] = user
	}
	f.mu.Unlock()
	if !ok || user == "" {
		http.Error(w, "unknown request", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, RedirectURI+"?code="+code+"&state="+url.QueryEscape(state), http.StatusFound)
}

func (f *OP) token(w http.ResponseWriter, r *http.Request) {
	id, secret, auth := r.BasicAuth()
	code := r.PostFormValue("code")
	f.mu.Lock()
	f.tokenReqs++
	fail := f.FailNth > 0 && f.tokenReqs%f.FailNth == 0
	user, valid := f.codes[code]
	delete(f.codes, code)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case fail:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":"server_error"}`)
		return
	case !auth || id != ClientID || secret != ClientSecret:
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	case !valid || r.PostFormValue("grant_type") != "authorization_code" || r.PostFormValue("redirect_uri") != RedirectURI:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	f.mu.Lock()
	f.exchanged++
	f.mu.Unlock()
	fmt.Fprintf(w, `{"access_token":"at-%s-%s","refresh_token":"rt-%s-%s","id_token":"x.y.z","token_type":"Bearer","expires_in":300}`,
		user, code, user, code)
}
