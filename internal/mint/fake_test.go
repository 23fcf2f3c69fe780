package mint

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOP is a token endpoint that checks client auth and answers each
// request with numbered tokens; fail decides which requests (1-based) fail.
type fakeOP struct {
	t        *testing.T
	auth     string // "basic" or "post": the method it insists on
	id, sec  string
	grant    string
	form     func(r *http.Request) string // extra check of the form; "" = ok
	fail     func(n int64) bool
	requests atomic.Int64
}

func newFakeOP(t *testing.T, auth, grant string) *fakeOP {
	return &fakeOP{t: t, auth: auth, id: "cli", sec: "s3cr3t-value", grant: grant}
}

func (f *fakeOP) start() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	srv := httptest.NewServer(mux)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "token_endpoint": srv.URL + "/token"})
	})
	f.t.Cleanup(srv.Close)
	return srv
}

func (f *fakeOP) token(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	if err := r.ParseForm(); err != nil {
		oauthErr(w, 400, "invalid_request", "bad form")
		return
	}
	if msg := f.checkAuth(r); msg != "" {
		oauthErr(w, 401, "invalid_client", msg)
		return
	}
	if g := r.PostForm.Get("grant_type"); g != f.grant {
		oauthErr(w, 400, "unsupported_grant_type", "got "+g)
		return
	}
	if f.form != nil {
		if msg := f.form(r); msg != "" {
			oauthErr(w, 400, "invalid_grant", msg)
			return
		}
	}
	if f.fail != nil && f.fail(n) {
		oauthErr(w, 503, "temporarily_unavailable", fmt.Sprintf("request %d refused", n))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token":       fmt.Sprintf("at-%d", n),
		"refresh_token":      fmt.Sprintf("rt-%d", n),
		"id_token":           fakeJWT(time.Now().Add(10 * time.Minute)),
		"token_type":         "Bearer",
		"expires_in":         300,
		"refresh_expires_in": "1800", // a string on purpose: some servers send one
	})
}

func (f *fakeOP) checkAuth(r *http.Request) string {
	id, sec, basic := r.BasicAuth()
	inBody := r.PostForm.Get("client_secret") != ""
	switch {
	case f.auth == "basic" && (!basic || inBody):
		return "want client_secret_basic only"
	case f.auth == "post" && (basic || !inBody):
		return "want client_secret_post only"
	case f.auth == "post":
		id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != f.id || sec != f.sec {
		return "client authentication failed for " + id
	}
	return ""
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// fakeJWT is an unsigned-looking JWS whose payload carries exp.
func fakeJWT(exp time.Time) string {
	enc := base64.RawURLEncoding
	payload := fmt.Sprintf(`{"sub":"u","exp":%d}`, exp.Unix())
	return enc.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".c2ln"
}

// baseConfig is a valid client_credentials config against srv.
func baseConfig(srv *httptest.Server, out string) Config {
	return Config{
		Flow: FlowClientCredentials, TokenURL: srv.URL + "/token",
		ClientID: "cli", ClientSecret: "s3cr3t-value", ClientAuth: "basic",
		Users: 1, Subject: "user%d", RedirectURI: "http://127.0.0.1/cb",
		TTL: time.Hour, N: 20, Parallel: 4, Emit: EmitAccessToken, MaxFailures: 10,
		Timeout: 5 * time.Second, Product: "fake", Output: out,
	}
}
