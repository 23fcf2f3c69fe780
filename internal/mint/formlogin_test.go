package mint

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// fakeFormOP serves a login form in Keycloak's shape (the authorization
// response is the form, tied to a cookie; its POST redirects to the
// client) or the reference OP's (authorize redirects to the page; its
// POST redirects to a callback that redirects to the client). Codes are
// single-use; the token endpoint wants the web client's Basic auth.
type fakeFormOP struct {
	srv   *httptest.Server
	refop bool

	mu      sync.Mutex
	pending map[string]string // request id -> state
	codes   map[string]string // code -> user
	users   map[string]int    // logins per user
	seq     int
}

const (
	formClient   = "web"
	formSecret   = "web-secret"
	formPassword = "pw-123"
	formRedirect = "http://127.0.0.1/cb"
)

func newFakeFormOP(t *testing.T, refop bool) *fakeFormOP {
	f := &fakeFormOP{refop: refop, pending: map[string]string{}, codes: map[string]string{}, users: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth", f.auth)
	mux.HandleFunc("GET /login/username", f.page)
	mux.HandleFunc("POST /login/username", f.submit)
	mux.HandleFunc("GET /authorize/callback", f.callback)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"token_endpoint": f.srv.URL + "/token", "authorization_endpoint": f.srv.URL + "/auth"})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// newID is a new request id or code; f.mu held.
func (f *fakeFormOP) newID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%d", prefix, f.seq)
}

func (f *fakeFormOP) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != formClient || q.Get("redirect_uri") != formRedirect || q.Get("response_type") != "code" || q.Get("state") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	id := f.newID("req")
	f.pending[id] = q.Get("state")
	f.mu.Unlock()
	if f.refop {
		http.Redirect(w, r, "/login/username?authRequestID="+id, http.StatusFound)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "AUTH_SESSION_ID", Value: id, Path: "/", Secure: true, HttpOnly: true})
	f.render(w, f.srv.URL+"/login/username?session_code="+id+"&execution=e1", id)
}

func (f *fakeFormOP) page(w http.ResponseWriter, r *http.Request) {
	f.render(w, "/login/username", r.URL.Query().Get("authRequestID"))
}

func (f *fakeFormOP) render(w http.ResponseWriter, action, id string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<html><body><form action="/search"></form><form method="post" action="%s">
<input name="username"><input type="password" name="password"><input type="hidden" name="id" value="%s">
</form></body></html>`, html.EscapeString(action), html.EscapeString(id))
}

func (f *fakeFormOP) submit(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	if !f.refop {
		if ck, err := r.Cookie("AUTH_SESSION_ID"); err != nil || ck.Value != id || r.URL.Query().Get("session_code") != id {
			http.Error(w, "session expired", http.StatusBadRequest)
			return
		}
	}
	user := r.PostFormValue("username")
	if r.PostFormValue("password") != formPassword {
		f.render(w, "/login/username", id) // 200: the form again
		return
	}
	f.mu.Lock()
	f.users[user]++
	f.mu.Unlock()
	if f.refop {
		http.Redirect(w, r, "/authorize/callback?id="+url.QueryEscape(id)+"&user="+url.QueryEscape(user), http.StatusFound)
		return
	}
	f.redirectWithCode(w, r, id, user)
}

func (f *fakeFormOP) callback(w http.ResponseWriter, r *http.Request) {
	f.redirectWithCode(w, r, r.URL.Query().Get("id"), r.URL.Query().Get("user"))
}

func (f *fakeFormOP) redirectWithCode(w http.ResponseWriter, r *http.Request, id, user string) {
	f.mu.Lock()
	state, ok := f.pending[id]
	delete(f.pending, id)
	code := f.newID("code")
	f.codes[code] = user
	f.mu.Unlock()
	if !ok {
		http.Error(w, "unknown request", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, formRedirect+"?code="+code+"&state="+url.QueryEscape(state), http.StatusFound)
}

func (f *fakeFormOP) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	code := r.PostFormValue("code")
	f.mu.Lock()
	user, valid := f.codes[code]
	delete(f.codes, code)
	f.mu.Unlock()
	if !ok || id != formClient || secret != formSecret {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	}
	if !valid || r.PostFormValue("grant_type") != "authorization_code" || r.PostFormValue("redirect_uri") != formRedirect {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"at-%s","refresh_token":"rt-%s","token_type":"Bearer","expires_in":300}`, user, user)
}

func formConfig(f *fakeFormOP, out string) Config {
	cfg := baseConfig(f.srv, out)
	cfg.Flow, cfg.TokenURL, cfg.Issuer = FlowRefopLogin, "", f.srv.URL
	cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth = formClient, formSecret, "basic"
	cfg.RedirectURI, cfg.Username, cfg.Password, cfg.Users = formRedirect, "user%d", formPassword, 3
	cfg.Scope, cfg.N = "openid offline_access", 12
	return cfg
}
