// Package keycloaktest is a fake of the part of Keycloak's admin REST API and
// of a realm's OpenID Connect endpoints that idpbench's provisioning uses
// (products/keycloak), for tests.
package keycloaktest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Fake is a Keycloak server with a bootstrap admin "admin". Like Keycloak,
// it refuses unknown fields in a representation (400 "Unrecognized field"),
// an expired or unknown admin token (401), a duplicate (409), wrong user
// credentials (400 invalid_grant, as Keycloak 26.7 answers them) and wrong
// client credentials (401 unauthorized_client), and answers introspection
// active:false when the client is not in the token's audience. Set its fields before the first request.
type Fake struct {
	*httptest.Server
	AdminPassword string // the admin's password: generated
	TokenLife     int    // admin token lifetime, seconds (default 60, as Keycloak's)
	FailUser      string // a user whose creation answers 500

	mu        sync.Mutex
	calls     map[string]int // route ("POST /admin/realms/{realm}/users") -> count
	adminToks map[string]bool
	realms    map[string]*Realm
}

// Realm is a created realm.
type Realm struct {
	Enabled  bool
	Lifespan int                // accessTokenLifespan, seconds
	Clients  map[string]*Client // by UUID
	Users    map[string]User    // by username
	tokens   map[string]fakeToken
}

// Client is a created client and its protocol mappers.
type Client struct {
	Rep     ClientRep
	Mappers []MapperRep
}

// User is a created user and its password.
type User struct {
	Rep      UserRep
	Password string
}

type fakeToken struct {
	sub      string
	audience bool // the client is in the token's audience
	openid   bool
}

// The representations, as Keycloak's admin API documents them
// (RealmRepresentation, ClientRepresentation, ProtocolMapperRepresentation,
// UserRepresentation, CredentialRepresentation): only the fields Setup sends.
type realmRep struct {
	Realm               string `json:"realm"`
	Enabled             *bool  `json:"enabled"`
	AccessTokenLifespan *int   `json:"accessTokenLifespan"`
}

// ClientRep is a ClientRepresentation.
type ClientRep struct {
	ClientID                  string   `json:"clientId"`
	Secret                    string   `json:"secret"`
	PublicClient              *bool    `json:"publicClient"`
	ServiceAccountsEnabled    bool     `json:"serviceAccountsEnabled"`
	DirectAccessGrantsEnabled bool     `json:"directAccessGrantsEnabled"`
	StandardFlowEnabled       bool     `json:"standardFlowEnabled"`
	RedirectURIs              []string `json:"redirectUris"`
}

// MapperRep is a ProtocolMapperRepresentation.
type MapperRep struct {
	Name           string            `json:"name"`
	Protocol       string            `json:"protocol"`
	ProtocolMapper string            `json:"protocolMapper"`
	Config         map[string]string `json:"config"`
}

// UserRep is a UserRepresentation with its credentials.
type UserRep struct {
	Username      string `json:"username"`
	Enabled       bool   `json:"enabled"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"emailVerified"`
	FirstName     string `json:"firstName"`
	LastName      string `json:"lastName"`
	Credentials   []struct {
		Type      string `json:"type"`
		Value     string `json:"value"`
		Temporary *bool  `json:"temporary"`
	} `json:"credentials"`
}

func NewFake(t testing.TB) *Fake {
	f := &Fake{AdminPassword: "admin-" + rand.Text(), TokenLife: 60, calls: map[string]int{},
		adminToks: map[string]bool{}, realms: map[string]*Realm{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /realms/{realm}/protocol/openid-connect/token", f.token)
	mux.HandleFunc("POST /realms/{realm}/protocol/openid-connect/token/introspect", f.introspect)
	mux.HandleFunc("GET /realms/{realm}/protocol/openid-connect/userinfo", f.userinfo)
	mux.HandleFunc("POST /admin/realms", f.admin(f.createRealm))
	mux.HandleFunc("POST /admin/realms/{realm}/clients", f.admin(f.createClient))
	mux.HandleFunc("GET /admin/realms/{realm}/clients", f.admin(f.listClients))
	mux.HandleFunc("POST /admin/realms/{realm}/clients/{id}/protocol-mappers/models", f.admin(f.addMapper))
	mux.HandleFunc("POST /admin/realms/{realm}/users", f.admin(f.createUser))
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := mux.Handler(r)
		f.mu.Lock()
		f.calls[route]++
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Count returns how often the route with pattern ("POST /admin/realms/{realm}/users") was called.
func (f *Fake) Count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[route]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func errorMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"errorMessage": msg})
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// decode reads a representation strictly, as Keycloak's Jackson setup does.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Header.Get("Content-Type") != "application/json" {
		errorMessage(w, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
		return false
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		errorMessage(w, http.StatusBadRequest, "Unrecognized field or bad JSON: "+err.Error())
		return false
	}
	return true
}

func (f *Fake) newToken() string { return rand.Text() + rand.Text() }

// token is the token endpoint: the admin-cli password grant in the master
// realm; client_credentials and password grants with Basic client
// authentication in the others.
func (f *Fake) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	realmName := r.PathValue("realm")
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if realmName == "master" {
		if r.PostForm.Get("client_id") != "admin-cli" || r.PostForm.Get("grant_type") != "password" ||
			r.PostForm.Get("username") != "admin" || r.PostForm.Get("password") != f.AdminPassword {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid user credentials")
			return
		}
		tok := f.newToken()
		f.adminToks[tok] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": f.TokenLife, "token_type": "Bearer"})
		return
	}
	realm, c, ok := f.clientAuth(w, r)
	if !ok {
		return
	}
	ft := fakeToken{audience: hasAudience(c), openid: strings.Contains(r.PostForm.Get("scope"), "openid")}
	out := map[string]any{"expires_in": realm.Lifespan, "token_type": "Bearer"}
	switch r.PostForm.Get("grant_type") {
	case "client_credentials":
		ft.sub = "service-account-" + c.Rep.ClientID
	case "password":
		u, ok := realm.Users[r.PostForm.Get("username")]
		if !ok || u.Password != r.PostForm.Get("password") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid user credentials")
			return
		}
		ft.sub = "id-" + u.Rep.Username
		out["refresh_token"] = f.newToken()
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant_type")
		return
	}
	tok := f.newToken()
	realm.tokens[tok] = ft
	out["access_token"] = tok
	writeJSON(w, http.StatusOK, out)
}

// clientAuth checks Basic client credentials. Called with f.mu held.
func (f *Fake) clientAuth(w http.ResponseWriter, r *http.Request) (*Realm, *Client, bool) {
	realm, ok := f.realms[r.PathValue("realm")]
	if !ok {
		errorMessage(w, http.StatusNotFound, "Realm does not exist")
		return nil, nil, false
	}
	id, secret, _ := r.BasicAuth()
	for _, c := range realm.Clients {
		if c.Rep.ClientID == id && c.Rep.Secret == secret {
			return realm, c, true
		}
	}
	oauthError(w, http.StatusUnauthorized, "unauthorized_client", "Invalid client or Invalid client credentials")
	return nil, nil, false
}

func hasAudience(c *Client) bool {
	for _, m := range c.Mappers {
		if m.ProtocolMapper == "oidc-audience-mapper" && m.Config["included.client.audience"] == c.Rep.ClientID &&
			m.Config["access.token.claim"] == "true" && m.Config["introspection.token.claim"] == "true" {
			return true
		}
	}
	return false
}

func (f *Fake) introspect(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	realm, _, ok := f.clientAuth(w, r)
	if !ok {
		return
	}
	t, ok := realm.tokens[r.PostForm.Get("token")]
	writeJSON(w, http.StatusOK, map[string]any{"active": ok && t.audience})
}

func (f *Fake) userinfo(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	realm, ok := f.realms[r.PathValue("realm")]
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t, known := fakeToken{}, false
	if ok {
		t, known = realm.tokens[tok]
	}
	switch {
	case !known:
		oauthError(w, http.StatusUnauthorized, "invalid_token", "Token verification failed")
	case !t.openid:
		oauthError(w, http.StatusForbidden, "insufficient_scope", "Missing openid scope")
	default:
		writeJSON(w, http.StatusOK, map[string]string{"sub": t.sub})
	}
}

// admin wraps an admin API handler: a valid admin token, then h with f.mu held.
func (f *Fake) admin(h func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !f.adminToks[tok] {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "HTTP 401 Unauthorized"})
			return
		}
		h(w, r)
	}
}

// ExpireAdminTokens makes every admin token issued so far invalid.
func (f *Fake) ExpireAdminTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.adminToks)
}

func (f *Fake) createRealm(w http.ResponseWriter, r *http.Request) {
	var rep realmRep
	if !decode(w, r, &rep) {
		return
	}
	if _, ok := f.realms[rep.Realm]; ok {
		errorMessage(w, http.StatusConflict, "Realm "+rep.Realm+" already exists")
		return
	}
	if rep.Enabled == nil || !*rep.Enabled || rep.AccessTokenLifespan == nil {
		errorMessage(w, http.StatusBadRequest, "fake: want enabled: true and an accessTokenLifespan")
		return
	}
	f.realms[rep.Realm] = &Realm{
		Enabled: *rep.Enabled, Lifespan: *rep.AccessTokenLifespan,
		Clients: map[string]*Client{}, Users: map[string]User{}, tokens: map[string]fakeToken{},
	}
	w.Header().Set("Location", f.URL+"/admin/realms/"+rep.Realm)
	w.WriteHeader(http.StatusCreated)
}

func (f *Fake) realm(w http.ResponseWriter, r *http.Request) (*Realm, bool) {
	realm, ok := f.realms[r.PathValue("realm")]
	if !ok {
		errorMessage(w, http.StatusNotFound, "Realm not found.")
	}
	return realm, ok
}

func (f *Fake) createClient(w http.ResponseWriter, r *http.Request) {
	realm, ok := f.realm(w, r)
	var rep ClientRep
	if !ok || !decode(w, r, &rep) {
		return
	}
	for _, c := range realm.Clients {
		if c.Rep.ClientID == rep.ClientID {
			errorMessage(w, http.StatusConflict, "Client "+rep.ClientID+" already exists")
			return
		}
	}
	id := fmt.Sprintf("uuid-%d", len(realm.Clients)+1)
	realm.Clients[id] = &Client{Rep: rep}
	w.Header().Set("Location", f.URL+r.URL.Path+"/"+id)
	w.WriteHeader(http.StatusCreated)
}

func (f *Fake) listClients(w http.ResponseWriter, r *http.Request) {
	realm, ok := f.realm(w, r)
	if !ok {
		return
	}
	out := []map[string]any{}
	for id, c := range realm.Clients {
		if q := r.URL.Query().Get("clientId"); q == "" || q == c.Rep.ClientID {
			out = append(out, map[string]any{"id": id, "clientId": c.Rep.ClientID, "enabled": true})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) addMapper(w http.ResponseWriter, r *http.Request) {
	realm, ok := f.realm(w, r)
	var rep MapperRep
	if !ok || !decode(w, r, &rep) {
		return
	}
	c, ok := realm.Clients[r.PathValue("id")]
	if !ok {
		errorMessage(w, http.StatusNotFound, "Could not find client")
		return
	}
	c.Mappers = append(c.Mappers, rep)
	w.WriteHeader(http.StatusCreated)
}

func (f *Fake) createUser(w http.ResponseWriter, r *http.Request) {
	realm, ok := f.realm(w, r)
	var rep UserRep
	if !ok || !decode(w, r, &rep) {
		return
	}
	switch _, dup := realm.Users[rep.Username]; {
	case rep.Username == f.FailUser:
		errorMessage(w, http.StatusInternalServerError, "unknown_error")
		return
	case dup:
		errorMessage(w, http.StatusConflict, "User exists with same username")
		return
	case len(rep.Credentials) != 1 || rep.Credentials[0].Type != "password" || rep.Credentials[0].Temporary == nil:
		errorMessage(w, http.StatusBadRequest, "fake: want one password credential with temporary set")
		return
	}
	realm.Users[rep.Username] = User{Rep: rep, Password: rep.Credentials[0].Value}
	w.WriteHeader(http.StatusCreated)
}

// Realm returns the realm created as name, or nil.
func (f *Fake) Realm(name string) *Realm {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.realms[name]
}

// AddRealm creates a realm as if through the admin API.
func (f *Fake) AddRealm(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.realms[name] = &Realm{Enabled: true, Lifespan: 300, Clients: map[string]*Client{}, Users: map[string]User{}, tokens: map[string]fakeToken{}}
}

// Routes returns how many routes were called.
func (f *Fake) Routes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
