package zitadeltest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/idpbench/idpbench/products/zitadel/zitadeldefs"
)

// Fake is a stateful stand-in for Zitadel: it serves every call idpbench
// makes, checks each request against the call's written shape (method and
// path, the checked headers, the JSON body's keys, value kinds and enum
// values) and answers with the written response body, ids replaced. With
// the definitions loaded ($IDPBENCH_ZITADEL_PROTO) its routes must be the
// definitions' routes, every API request must map to the call's method and
// parse as its input, and every answer must parse as its output. It
// keeps what was created, so the Session API login works against what
// provision zitadel provisioned.
//
// Set the knobs before the first request.
type Fake struct {
	URL      string // issuer and API base
	AdminPAT string // the IAM_OWNER token
	OrgID    string

	// Lag is how many reads of a new object (GetUserByID, GetAppByID, the
	// login client in ListIAMMembers, a new PAT's use) fail with 404 (401
	// for a token) before it becomes readable: a lagging projection.
	Lag int
	// LoginSuffix is appended to user names to form login names, as when
	// the domain policy sets userLoginMustBeDomain ("@zitadel.localhost").
	LoginSuffix string
	// FailCall makes the named call answer FailStatus with Zitadel's error
	// body, after FailAfter successful calls.
	FailCall   string
	FailStatus int
	FailAfter  int

	t       testing.TB
	srv     *httptest.Server
	records map[string]*Record
	defs    *zitadeldefs.Defs // nil: $IDPBENCH_ZITADEL_PROTO unset, shapes only

	log      []Request
	mu       sync.Mutex
	seq      int64
	calls    map[string]int
	users    map[string]*fakeUser
	tokens   map[string]*fakeToken
	projects map[string]string // id -> name
	apps     map[string]*fakeApp
	authReqs map[string]*fakeAuthReq
	sessions map[string]*fakeSession
	codes    map[string]*fakeAuthReq
	reads    map[string]int
	logins   map[string]int // user name -> successful code exchanges
}

type fakeUser struct {
	id, userName, password string
	machine                bool
	roles                  []string
	clientSecret           string
}

type fakeToken struct {
	userID string
	uses   int
}

type fakeApp struct {
	id, projectID, name, clientID, secret string
	oidc                                  bool
	redirects                             []string
}

type fakeAuthReq struct {
	id, clientID, redirect, state, scope, loginClient string
	userID                                            string
	done                                              bool
}

type fakeSession struct{ token, userID string }

// Request is one request the fake served, as the client sent it.
type Request struct {
	Call     string // the call it was routed to: "CreateSession"
	Method   string
	Path     string // escaped, as sent
	RawQuery string
	Body     []byte
	// Checked says what the definitions matched it to,
	// "POST /v2/sessions -> zitadel.session.v2.SessionService.CreateSession";
	// "" when they were not loaded or the call is an OIDC endpoint.
	Checked string
}

// OIDCCalls are the calls that are OpenID Connect / OAuth endpoints, not
// methods of Zitadel's API definitions: they stay checked against the
// reference OP (built on Zitadel's own OIDC library) and their records.
var OIDCCalls = map[string]bool{"Discovery": true, "Authorize": true, "ExchangeCode": true}

// NewFake starts a fake Zitadel with an admin PAT and an organization.
func NewFake(t testing.TB) *Fake {
	f := &Fake{
		AdminPAT: "admin-pat-" + rand.Text(), OrgID: "291356340231487457", t: t,
		records: map[string]*Record{}, calls: map[string]int{}, users: map[string]*fakeUser{},
		tokens: map[string]*fakeToken{}, projects: map[string]string{}, apps: map[string]*fakeApp{},
		authReqs: map[string]*fakeAuthReq{}, sessions: map[string]*fakeSession{}, codes: map[string]*fakeAuthReq{},
		reads: map[string]int{}, logins: map[string]int{}, seq: 300000000000000000,
	}
	for _, n := range Names() {
		r := MustLoad(t, n)
		f.records[r.Call] = r
	}
	defs, err := zitadeldefs.FromEnv()
	if err != nil {
		t.Fatalf("zitadeltest: %v", err)
	}
	f.defs = defs
	admin := &fakeUser{id: f.id(), userName: "zitadel-admin-sa", machine: true, roles: []string{"IAM_OWNER"}}
	f.users[admin.id] = admin
	f.tokens[f.AdminPAT] = &fakeToken{userID: admin.id, uses: 1 << 30}

	mux := http.NewServeMux()
	routes := []struct {
		pattern, call string
		auth          authKind
		fn            func(*request) (int, map[string]any)
	}{
		{"GET /management/v1/orgs/me", "GetMyOrg", authAdmin, f.getMyOrg},
		{"POST /management/v1/projects", "AddProject", authAdmin, f.addProject},
		{"POST /management/v1/projects/{p}/apps/api", "AddAPIApp", authAdmin, f.addAPIApp},
		{"POST /management/v1/projects/{p}/apps/oidc", "AddOIDCApp", authAdmin, f.addOIDCApp},
		{"POST /management/v1/projects/{p}/apps/{app}/keys", "AddAppKey", authAdmin, f.addAppKey},
		{"GET /management/v1/projects/{p}/apps/{app}", "GetAppByID", authAdmin, f.getApp},
		{"POST /management/v1/users/machine", "AddMachineUser", authAdmin, f.addMachineUser},
		{"POST /management/v1/users/{u}/keys", "AddMachineKey", authAdmin, f.addMachineKey},
		{"PUT /management/v1/users/{u}/secret", "GenerateMachineSecret", authAdmin, f.generateSecret},
		{"POST /management/v1/users/{u}/pats", "AddPersonalAccessToken", authAdmin, f.addPAT},
		{"POST /admin/v1/members", "AddIAMMember", authAdmin, f.addIAMMember},
		{"POST /admin/v1/members/_search", "ListIAMMembers", authAdmin, f.listIAMMembers},
		{"POST /v2/users/human", "AddHumanUser", authAdmin, f.addHuman},
		{"GET /v2/users/{u}", "GetUserByID", authAdmin, f.getUser},
		{"GET /auth/v1/users/me", "GetMyUser", authAny, f.getMe},
		{"GET /.well-known/openid-configuration", "Discovery", authNone, f.discovery},
		{"GET /oauth/v2/authorize", "Authorize", authNone, f.authorize},
		{"POST /v2/sessions", "CreateSession", authLogin, f.createSession},
		{"POST /v2/oidc/auth_requests/{id}", "CreateCallback", authLogin, f.createCallback},
		{"POST /oauth/v2/token", "ExchangeCode", authNone, f.token},
	}
	for _, rt := range routes {
		if f.records[rt.call] == nil {
			t.Fatalf("zitadeltest: no recorded shape for %s", rt.call)
		}
		f.checkRoute(rt.pattern, rt.call)
		mux.HandleFunc(rt.pattern, f.handler(rt.call, rt.auth, rt.fn))
	}
	mux.HandleFunc("/", f.unserved)
	f.srv = httptest.NewServer(mux)
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// checkRoute fails t when the definitions do not map the fake's route
// pattern ("POST /v2/oidc/auth_requests/{id}", the variables bound to an
// id) to the method the call is named after.
func (f *Fake) checkRoute(pattern, call string) {
	if f.defs == nil || OIDCCalls[call] {
		return
	}
	verb, path, _ := strings.Cut(pattern, " ")
	path = routeVar.ReplaceAllString(path, "291356606662524897")
	m, err := f.defs.Resolve(verb, path)
	switch {
	case err != nil:
		f.t.Fatalf("zitadeltest: route %s (%s): %v", pattern, call, err)
	case string(m.Method.Name()) != call:
		f.t.Fatalf("zitadeltest: route %s is %s in the definitions, not %s", pattern, m.Method.FullName(), call)
	}
}

var routeVar = regexp.MustCompile(`\{[a-z]+\}`)

// unserved answers what no route of the fake serves with Zitadel's 404;
// with the definitions loaded, a verb and path that no method maps also
// fails the test: the client called something Zitadel does not have.
func (f *Fake) unserved(w http.ResponseWriter, r *http.Request) {
	if f.defs != nil {
		if _, err := f.defs.Resolve(r.Method, r.URL.EscapedPath()); err != nil {
			f.t.Errorf("zitadeltest: %v", err)
		}
	}
	writeErr(w, http.StatusNotFound, 5, "Not Found")
}

// Requests is every request the fake served, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Defs are the definitions the fake checks against (nil when
// $IDPBENCH_ZITADEL_PROTO is unset).
func (f *Fake) Defs() *zitadeldefs.Defs { return f.defs }

// Calls is how many requests the named call got.
func (f *Fake) Calls(call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[call]
}

// Logins is how many codes were exchanged for the human user userName.
func (f *Fake) Logins(userName string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins[userName]
}

// HumanUsers is the number of human users created.
func (f *Fake) HumanUsers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, u := range f.users {
		if !u.machine {
			n++
		}
	}
	return n
}

type authKind int

const (
	authNone  authKind = iota
	authAdmin          // the admin PAT (IAM_OWNER)
	authLogin          // a user with IAM_LOGIN_CLIENT
	authAny            // any known, readable token
)

// request is one call being served, with the fake's lock held.
type request struct {
	*http.Request
	body   []byte
	caller *fakeUser
	w      http.ResponseWriter
	match  *zitadeldefs.Match // the definitions' method, nil without them
}

func (f *Fake) handler(call string, auth authKind, fn func(*request) (int, map[string]any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := readBody(r)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls[call]++
		rec := f.records[call]
		if diffs := f.shapeDiffs(rec, r, body); len(diffs) > 0 {
			f.t.Errorf("zitadeltest: %s differs from its written shape (%s):\n  %s", call, rec.Doc, strings.Join(diffs, "\n  "))
			writeErr(w, http.StatusBadRequest, 3, "request differs from the written call")
			return
		}
		req := &request{Request: r, body: body, w: w}
		if !f.checkDefs(req, call) {
			writeErr(w, http.StatusBadRequest, 3, "request does not parse as the definitions' input message")
			return
		}
		if status, code, msg := f.authorizeCaller(req, auth); status != 0 {
			writeErr(w, status, code, msg)
			return
		}
		if call == f.FailCall && f.calls[call] > f.FailAfter {
			writeErr(w, f.FailStatus, 13, "Errors.Internal (injected failure of "+call+")")
			return
		}
		status, overrides := fn(req)
		if status == 0 { // fn wrote the answer itself
			return
		}
		if status >= 300 {
			code, _ := overrides["code"].(int)
			msg, _ := overrides["message"].(string)
			writeErr(w, status, code, msg)
			return
		}
		f.answer(req, rec, status, overrides)
	}
}

// checkDefs logs the request and, with the definitions loaded, checks it
// against them: the verb and path must map to the method the call is named
// after and the body must parse as its input message.
func (f *Fake) checkDefs(req *request, call string) bool {
	logged := Request{Call: call, Method: req.Method, Path: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Body: req.body}
	defer func() { f.log = append(f.log, logged) }()
	if f.defs == nil || OIDCCalls[call] {
		return true
	}
	m, _, err := f.defs.CheckRequest(req.Method, req.URL.EscapedPath(), req.URL.Query(), req.body)
	if err == nil && string(m.Method.Name()) != call {
		err = fmt.Errorf("%s %s is %s in the definitions, not %s", req.Method, req.URL.Path, m.Method.FullName(), call)
	}
	if err != nil {
		f.t.Errorf("zitadeltest: %s: %v", call, err)
		return false
	}
	req.match = m
	logged.Checked = fmt.Sprintf("%s %s -> %s", m.Verb, m.Template, m.Method.FullName())
	return true
}

// shapeDiffs checks r against the recorded call: the checked headers
// (tokens by scheme only, the org id exactly) and the body's shape.
func (f *Fake) shapeDiffs(rec *Record, r *http.Request, body []byte) []string {
	tok := r.Header.Get("Authorization")
	_, cred, _ := strings.Cut(tok, " ")
	vars := map[string]string{"PAT": cred, "LOGIN_PAT": cred, "BASIC": cred, "ORG": f.OrgID,
		"LOGIN_CLIENT": r.Header.Get("X-Zitadel-Login-Client")}
	var diffs []string
	if r.Method != rec.Request.Method {
		diffs = append(diffs, fmt.Sprintf("method %s, want %s", r.Method, rec.Request.Method))
	}
	diffs = append(diffs, rec.CheckHeaders(r, vars)...)
	switch {
	case rec.Request.Form != nil:
		form, _ := url.ParseQuery(string(body))
		for k := range rec.Request.Form {
			if form.Get(k) == "" {
				diffs = append(diffs, "form "+k+": missing")
			}
		}
	case len(rec.Request.Body) > 0:
		diffs = append(diffs, ShapeDiff(rec.Request.Body, body)...)
	case len(body) > 0:
		diffs = append(diffs, "a body was sent, the recorded call has none")
	}
	if rec.Request.Query != nil {
		for k := range rec.Request.Query {
			if r.URL.Query().Get(k) == "" {
				diffs = append(diffs, "query "+k+": missing")
			}
		}
	}
	return diffs
}

// authorizeCaller answers like Zitadel: 401 for an unknown (or not yet
// readable) token, 403 without the needed role.
func (f *Fake) authorizeCaller(req *request, auth authKind) (int, int, string) {
	if auth == authNone {
		return 0, 0, ""
	}
	kind, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	t := f.tokens[cred]
	if kind != "Bearer" || t == nil {
		return http.StatusUnauthorized, 16, "Errors.Token.Invalid (AUTH-7fs1e)"
	}
	if t.uses++; t.uses <= f.Lag {
		return http.StatusUnauthorized, 16, "Errors.Token.Invalid (AUTH-7fs1e)"
	}
	req.caller = f.users[t.userID]
	switch {
	case auth == authAdmin && !slices.Contains(req.caller.roles, "IAM_OWNER"),
		auth == authLogin && !slices.Contains(req.caller.roles, "IAM_LOGIN_CLIENT"):
		return http.StatusForbidden, 7, "No matching permissions found (AUTH-5mWD2)"
	}
	return 0, 0, ""
}

func writeErr(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg, "details": []any{
		map[string]any{"@type": "type.googleapis.com/zitadel.v1.ErrorDetail", "message": msg},
	}})
}

// answer writes the recorded response body with the overrides applied
// (keys are dot paths; the value replaces the recorded one).
// With the definitions loaded, the answer must parse as the method's
// output message.
func (f *Fake) answer(req *request, rec *Record, status int, overrides map[string]any) {
	var body map[string]any
	if err := json.Unmarshal(rec.Response.Body, &body); err != nil {
		f.t.Errorf("zitadeltest: written %s response: %v", rec.Call, err)
	}
	for path, v := range overrides {
		setPath(body, strings.Split(path, "."), v)
	}
	b, _ := json.Marshal(body)
	if req.match != nil {
		if _, err := f.defs.CheckResponse(req.match, b); err != nil {
			f.t.Errorf("zitadeltest: the fake's %s answer: %v", rec.Call, err)
		}
	}
	req.w.Header().Set("Content-Type", "application/json")
	req.w.WriteHeader(status)
	req.w.Write(append(b, '\n'))
}

func setPath(m map[string]any, path []string, v any) {
	if len(path) == 1 {
		m[path[0]] = v
		return
	}
	next, ok := m[path[0]].(map[string]any)
	if !ok {
		next = map[string]any{}
		m[path[0]] = next
	}
	setPath(next, path[1:], v)
}

func (f *Fake) id() string {
	f.seq++
	return strconv.FormatInt(f.seq, 10)
}

func decode(req *request, v any) error { return json.Unmarshal(req.body, v) }

func fail(status, code int, msg string) (int, map[string]any) {
	return status, map[string]any{"code": code, "message": msg}
}

// --- provisioning -----------------------------------------------------------

func (f *Fake) getMyOrg(*request) (int, map[string]any) {
	return 200, map[string]any{"org.id": f.OrgID}
}

func (f *Fake) addProject(req *request) (int, map[string]any) {
	var in struct{ Name string }
	decode(req, &in)
	for _, n := range f.projects {
		if n == in.Name {
			return fail(409, 6, "Errors.Project.AlreadyExists")
		}
	}
	id := f.id()
	f.projects[id] = in.Name
	return 200, map[string]any{"id": id}
}

func (f *Fake) project(req *request) (string, bool) {
	p := req.PathValue("p")
	_, ok := f.projects[p]
	return p, ok
}

func (f *Fake) addAPIApp(req *request) (int, map[string]any) {
	p, ok := f.project(req)
	if !ok {
		return fail(404, 5, "Errors.Project.NotFound")
	}
	var in struct{ Name string }
	decode(req, &in)
	a := &fakeApp{id: f.id(), projectID: p, name: in.Name, clientID: f.id()}
	f.apps[a.id] = a
	return 200, map[string]any{"appId": a.id, "clientId": a.clientID}
}

func (f *Fake) addOIDCApp(req *request) (int, map[string]any) {
	p, ok := f.project(req)
	if !ok {
		return fail(404, 5, "Errors.Project.NotFound")
	}
	var in struct {
		Name         string
		RedirectURIs []string `json:"redirectUris"`
	}
	decode(req, &in)
	a := &fakeApp{id: f.id(), projectID: p, name: in.Name, clientID: f.id(), secret: rand.Text() + rand.Text(), oidc: true, redirects: in.RedirectURIs}
	f.apps[a.id] = a
	return 200, map[string]any{"appId": a.id, "clientId": a.clientID, "clientSecret": a.secret}
}

func (f *Fake) addAppKey(req *request) (int, map[string]any) {
	a := f.apps[req.PathValue("app")]
	if a == nil || a.oidc {
		return fail(404, 5, "Errors.App.NotFound")
	}
	kid := f.id()
	file := map[string]string{"type": "application", "keyId": kid, "key": testKeyPEM(), "appId": a.id, "clientId": a.clientID}
	return 200, map[string]any{"id": kid, "keyDetails": keyDetails(file)}
}

func (f *Fake) getApp(req *request) (int, map[string]any) {
	a := f.apps[req.PathValue("app")]
	if a == nil || a.projectID != req.PathValue("p") {
		return fail(404, 5, "Errors.App.NotFound")
	}
	if f.reads[a.id]++; f.reads[a.id] <= f.Lag {
		return fail(404, 5, "Errors.App.NotFound (QUERY-DGdfx)")
	}
	return 200, map[string]any{"app.id": a.id, "app.name": a.name}
}

func (f *Fake) userNameTaken(name string) bool {
	for _, u := range f.users {
		if strings.EqualFold(u.userName, name) {
			return true
		}
	}
	return false
}

func (f *Fake) addMachineUser(req *request) (int, map[string]any) {
	var in struct{ UserName string }
	decode(req, &in)
	if f.userNameTaken(in.UserName) {
		return fail(409, 6, "Errors.User.AlreadyExists")
	}
	u := &fakeUser{id: f.id(), userName: in.UserName, machine: true}
	f.users[u.id] = u
	return 200, map[string]any{"userId": u.id}
}

func (f *Fake) machine(req *request) *fakeUser {
	u := f.users[req.PathValue("u")]
	if u == nil || !u.machine {
		return nil
	}
	return u
}

func (f *Fake) addMachineKey(req *request) (int, map[string]any) {
	u := f.machine(req)
	if u == nil {
		return fail(404, 5, "Errors.User.NotFound")
	}
	kid := f.id()
	file := map[string]string{"type": "serviceaccount", "keyId": kid, "key": testKeyPEM(), "userId": u.id}
	return 200, map[string]any{"keyId": kid, "keyDetails": keyDetails(file)}
}

func (f *Fake) generateSecret(req *request) (int, map[string]any) {
	u := f.machine(req)
	if u == nil {
		return fail(404, 5, "Errors.User.NotFound")
	}
	u.clientSecret = rand.Text() + rand.Text()
	return 200, map[string]any{"clientId": u.userName, "clientSecret": u.clientSecret}
}

func (f *Fake) addPAT(req *request) (int, map[string]any) {
	u := f.machine(req)
	if u == nil {
		return fail(404, 5, "Errors.User.NotFound")
	}
	tok := rand.Text() + rand.Text()
	f.tokens[tok] = &fakeToken{userID: u.id}
	return 200, map[string]any{"tokenId": f.id(), "token": tok}
}

func (f *Fake) addIAMMember(req *request) (int, map[string]any) {
	var in struct {
		UserID string
		Roles  []string
	}
	decode(req, &in)
	u := f.users[in.UserID]
	if u == nil {
		return fail(404, 5, "Errors.User.NotFound")
	}
	u.roles = append(u.roles, in.Roles...)
	return 200, nil
}

func (f *Fake) listIAMMembers(*request) (int, map[string]any) {
	f.reads["members"]++
	var proto map[string]any
	var rec struct {
		Result []map[string]any `json:"result"`
	}
	json.Unmarshal(f.records["ListIAMMembers"].Response.Body, &rec)
	proto = rec.Result[0]
	var result []any
	for _, u := range f.sortedUsers() {
		if len(u.roles) == 0 || (slices.Contains(u.roles, "IAM_LOGIN_CLIENT") && f.reads["members"] <= f.Lag) {
			continue
		}
		m := map[string]any{}
		for k, v := range proto {
			m[k] = v
		}
		m["userId"], m["roles"], m["preferredLoginName"] = u.id, u.roles, u.userName
		result = append(result, m)
	}
	return 200, map[string]any{"result": result}
}

func (f *Fake) sortedUsers() []*fakeUser {
	var out []*fakeUser
	for _, u := range f.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *fakeUser) int { return strings.Compare(a.id, b.id) })
	return out
}

func (f *Fake) addHuman(req *request) (int, map[string]any) {
	var in struct {
		Username     string
		Organization struct{ OrgID string }
		Email        struct {
			Email      string
			IsVerified bool
		}
		Password struct {
			Password       string
			ChangeRequired bool
		}
	}
	decode(req, &in)
	switch {
	case in.Organization.OrgID != f.OrgID:
		return fail(404, 5, "Errors.Org.NotFound")
	case f.userNameTaken(in.Username):
		return fail(409, 6, "Errors.User.AlreadyExists")
	case !strings.Contains(in.Email.Email, "@") || !in.Email.IsVerified:
		return fail(400, 3, "Errors.User.Email.Invalid")
	case !meetsPolicy(in.Password.Password) || in.Password.ChangeRequired:
		return fail(400, 3, "Errors.User.PasswordComplexityPolicy.Invalid")
	}
	u := &fakeUser{id: f.id(), userName: in.Username, password: in.Password.Password}
	f.users[u.id] = u
	return 201, map[string]any{"userId": u.id}
}

// meetsPolicy is Zitadel's default password complexity policy.
func meetsPolicy(pw string) bool {
	var up, low, num, sym bool
	for _, r := range pw {
		switch {
		case unicode.IsUpper(r):
			up = true
		case unicode.IsLower(r):
			low = true
		case unicode.IsDigit(r):
			num = true
		default:
			sym = true
		}
	}
	return len(pw) >= 8 && len(pw) <= 72 && up && low && num && sym
}

func (f *Fake) loginName(u *fakeUser) string {
	if u.machine {
		return u.userName
	}
	return u.userName + f.LoginSuffix
}

func (f *Fake) getUser(req *request) (int, map[string]any) {
	u := f.users[req.PathValue("u")]
	if u == nil {
		return fail(404, 5, "Errors.User.NotFound")
	}
	if f.reads[u.id]++; f.reads[u.id] <= f.Lag {
		return fail(404, 5, "Errors.User.NotFound (QUERY-Dfbg2)")
	}
	ln := f.loginName(u)
	return 200, map[string]any{"user.userId": u.id, "user.username": u.userName, "user.loginNames": []string{ln}, "user.preferredLoginName": ln}
}

func (f *Fake) getMe(req *request) (int, map[string]any) {
	u := req.caller
	return 200, map[string]any{"user.id": u.id, "user.userName": u.userName, "user.loginNames": []string{u.userName}, "user.preferredLoginName": u.userName}
}

// --- the Session API login --------------------------------------------------

func (f *Fake) discovery(*request) (int, map[string]any) {
	return 200, map[string]any{
		"issuer": f.URL, "authorization_endpoint": f.URL + "/oauth/v2/authorize", "token_endpoint": f.URL + "/oauth/v2/token",
		"introspection_endpoint": f.URL + "/oauth/v2/introspect", "userinfo_endpoint": f.URL + "/oidc/v1/userinfo",
		"revocation_endpoint": f.URL + "/oauth/v2/revoke", "end_session_endpoint": f.URL + "/oidc/v1/end_session", "jwks_uri": f.URL + "/oauth/v2/keys",
	}
}

func (f *Fake) client(id string) *fakeApp {
	for _, a := range f.apps {
		if a.clientID == id && a.oidc {
			return a
		}
	}
	return nil
}

// authorize records a login-v2 auth request when x-zitadel-login-client is
// set, and redirects to the login UI with its id.
func (f *Fake) authorize(req *request) (int, map[string]any) {
	q := req.URL.Query()
	a := f.client(q.Get("client_id"))
	switch {
	case a == nil:
		return fail(400, 3, "invalid_client: client not found")
	case !slices.Contains(a.redirects, q.Get("redirect_uri")):
		return fail(400, 3, "invalid_request: The requested redirect_uri is missing in the client configuration.")
	case q.Get("response_type") != "code" || !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		return fail(400, 3, "invalid_request: response_type code and scope openid expected")
	}
	ar := &fakeAuthReq{clientID: a.clientID, redirect: q.Get("redirect_uri"), state: q.Get("state"), scope: q.Get("scope"),
		loginClient: req.Header.Get("x-zitadel-login-client")}
	if ar.loginClient == "" {
		http.Redirect(req.w, req.Request, "/ui/login/login?authRequestID="+f.id(), http.StatusFound)
		return 0, nil
	}
	ar.id = "V2_" + f.id()
	f.authReqs[ar.id] = ar
	http.Redirect(req.w, req.Request, "/ui/v2/login/login?authRequest="+ar.id, http.StatusFound)
	return 0, nil
}

func (f *Fake) createSession(req *request) (int, map[string]any) {
	var in struct {
		Checks struct {
			User     struct{ LoginName string }
			Password struct{ Password string }
		}
	}
	decode(req, &in)
	var u *fakeUser
	for _, c := range f.users {
		if !c.machine && strings.EqualFold(f.loginName(c), in.Checks.User.LoginName) {
			u = c
		}
	}
	switch {
	case u == nil:
		return fail(404, 5, "Errors.User.NotFound (QUERY-Dfbg2)")
	case u.password != in.Checks.Password.Password:
		return fail(400, 3, "Errors.User.Password.Invalid (COMMAND-3M0fs)")
	}
	id, tok := f.id(), rand.Text()+rand.Text()
	f.sessions[id] = &fakeSession{token: tok, userID: u.id}
	return 201, map[string]any{"sessionId": id, "sessionToken": tok}
}

func (f *Fake) createCallback(req *request) (int, map[string]any) {
	ar := f.authReqs[req.PathValue("id")]
	var in struct {
		Session struct{ SessionID, SessionToken string }
	}
	decode(req, &in)
	s := f.sessions[in.Session.SessionID]
	switch {
	case ar == nil:
		return fail(404, 5, "Errors.AuthRequest.NotExisting (COMMAND-jae5P)")
	case ar.done:
		return fail(400, 9, "Errors.AuthRequest.AlreadyHandled (COMMAND-Sx208nt)")
	case req.caller.id != ar.loginClient:
		return fail(403, 7, "Errors.AuthRequest.WrongLoginClient (COMMAND-rai9Y)")
	case s == nil || s.token != in.Session.SessionToken:
		return fail(404, 5, "Errors.Session.NotExisting (COMMAND-x0099887)")
	}
	ar.done, ar.userID = true, s.userID
	code := rand.Text()
	f.codes[code] = ar
	v := url.Values{"code": {code}, "state": {ar.state}}
	return 200, map[string]any{"callbackUrl": ar.redirect + "?" + v.Encode()}
}

func (f *Fake) token(req *request) (int, map[string]any) {
	form, _ := url.ParseQuery(string(req.body))
	id, secret, ok := req.BasicAuth()
	id, _ = url.QueryUnescape(id)
	secret, _ = url.QueryUnescape(secret)
	a := f.client(id)
	if !ok || a == nil || a.secret != secret {
		oauthErr(req.w, 401, "invalid_client", "client authentication failed")
		return 0, nil
	}
	ar := f.codes[form.Get("code")]
	delete(f.codes, form.Get("code"))
	if form.Get("grant_type") != "authorization_code" || ar == nil || ar.clientID != id || form.Get("redirect_uri") != ar.redirect {
		oauthErr(req.w, 400, "invalid_grant", "invalid code")
		return 0, nil
	}
	u := f.users[ar.userID]
	f.logins[u.userName]++
	// The recorded token response, without refresh_token unless the
	// scope asked for offline_access.
	var out map[string]any
	json.Unmarshal(f.records["ExchangeCode"].Response.Body, &out)
	out["access_token"], out["id_token"] = "zat-"+u.userName+"-"+rand.Text(), "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"
	delete(out, "refresh_token")
	if slices.Contains(strings.Fields(ar.scope), "offline_access") {
		out["refresh_token"] = "zrt-" + u.userName + "-" + rand.Text()
	}
	req.w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(req.w).Encode(out)
	return 0, nil
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// --- keys -------------------------------------------------------------------

var (
	keyOnce sync.Once
	keyPEM  string
)

// testKeyPEM is one RSA key per test binary, PKCS#1 PEM as Zitadel writes it.
func testKeyPEM() string {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	})
	return keyPEM
}

func keyDetails(file map[string]string) string {
	b, _ := json.Marshal(file)
	return base64.StdEncoding.EncodeToString(b)
}
