package zitadeldefs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/loginhop"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
	"github.com/idpbench/idpbench/products/zitadel/zitadeldefs"
	"github.com/idpbench/idpbench/products/zitadel/zitadeltest"
)

// defs loads the definitions or skips (unset) / fails (set but unusable).
func defs(t *testing.T) *zitadeldefs.Defs {
	t.Helper()
	d, err := zitadeldefs.FromEnv()
	switch {
	case err != nil:
		t.Fatal(err)
	case d == nil:
		t.Skip(zitadeldefs.SkipMessage)
	}
	return d
}

// TestDefinitions checks every Zitadel API call idpbench makes against
// Zitadel's own definitions (@zitadel/proto): the written shapes in
// zitadeltest/testdata, the requests the real client sends (captured by the
// fake while zitadelapi.Setup provisions and the Session API login runs, as
// provision zitadel and mintpool's session-api flow do), that no call of the
// client's code is left out, and that the check rejects what it must.
func TestDefinitions(t *testing.T) {
	d := defs(t)
	t.Logf("definitions: %s@%s from %s: %d HTTP routes", zitadeldefs.Package, zitadeldefs.Version, d.Dir, len(d.Routes))
	verified := map[string]bool{}
	t.Run("written shapes", func(t *testing.T) { checkRecords(t, d) })
	t.Run("captured requests", func(t *testing.T) { checkCaptured(t, d, verified) })
	t.Run("every call of the client", func(t *testing.T) { checkComplete(t, verified) })
	t.Run("mutations", func(t *testing.T) { checkMutations(t, d) })
}

// checkRecords: each written request parses as its method's input and each
// written answer as its output.
func checkRecords(t *testing.T, d *zitadeldefs.Defs) {
	for _, name := range zitadeltest.Names() {
		rec := zitadeltest.MustLoad(t, name)
		if zitadeltest.OIDCCalls[rec.Call] {
			t.Logf("out of scope: %s.json (%s %s): an OIDC endpoint, not a method of the definitions", name, rec.Request.Method, rec.Request.Path)
			continue
		}
		q := url.Values{}
		for k, v := range rec.Request.Query {
			q.Set(k, v)
		}
		m, _, err := d.CheckRequest(rec.Request.Method, rec.Request.Path, q, rec.Request.Body)
		if err != nil {
			t.Errorf("%s.json request: %v", name, err)
			continue
		}
		if string(m.Method.Name()) != rec.Call {
			t.Errorf("%s.json: %s %s is %s, the record says %s", name, rec.Request.Method, rec.Request.Path, m.Method.FullName(), rec.Call)
		}
		if _, err := d.CheckResponse(m, rec.Response.Body); err != nil {
			t.Errorf("%s.json response: %v", name, err)
			continue
		}
		t.Logf("verified %s.json: %s %s -> %s (request %s, answer %s)", name, m.Verb, m.Template, m.Method.FullName(), m.Method.Input().Name(), m.Method.Output().Name())
	}
}

// checkCaptured drives the real client through the fake and checks every
// request it sent, independently of the fake's own checks.
func checkCaptured(t *testing.T, d *zitadeldefs.Defs, verified map[string]bool) {
	f := zitadeltest.NewFake(t)
	f.Lag = 1
	if f.Defs() == nil {
		t.Fatal("the fake did not load the definitions")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	cfg := zitadelapi.SetupConfig{Issuer: f.URL, PAT: f.AdminPAT, OutDir: dir, Prefix: "idpbench", Users: 2,
		Username: "bench-user%d", RedirectURI: "http://localhost:9999/cb", Parallel: 1, Timeout: 20 * time.Second,
		GateInterval: 5 * time.Millisecond, RequestTimeout: 5 * time.Second}
	if err := zitadelapi.Setup(ctx, cfg, &stdout, io.Discard); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	login(ctx, t, f, stdout.Bytes())

	for _, r := range f.Requests() {
		what := r.Method + " " + r.Path
		if zitadeltest.OIDCCalls[r.Call] {
			if !verified[r.Call] {
				t.Logf("out of scope: %s (%s): an OIDC endpoint, exercised against the reference OP", r.Call, what)
			}
			verified[r.Call] = true
			continue
		}
		q, _ := url.ParseQuery(r.RawQuery)
		m, _, err := d.CheckRequest(r.Method, r.Path, q, r.Body)
		if err == nil && string(m.Method.Name()) != r.Call {
			err = errors.New("is " + string(m.Method.FullName()))
		}
		if err != nil {
			t.Errorf("the client's %s (%s): %v", r.Call, what, err)
			continue
		}
		if !verified[r.Call] {
			t.Logf("verified %s as sent by the client: %s -> %s, body %s", r.Call, what, m.Method.FullName(), redactBody(r.Body))
		}
		verified[r.Call] = true
	}
}

// login runs the Session API login (zitadelapi's Flow, which mintpool's
// session-api and loadstep's --login session-api drive), each hop sent as
// is (loadstep's own requests are checked by zitadeltest's
// TestAdapterAgainstFake, through the same fake). The code exchange that
// follows is the tools' own, not a call of zitadelapi.
func login(ctx context.Context, t *testing.T, f *zitadeltest.Fake, summary []byte) {
	var sum zitadelapi.Summary
	if err := json.Unmarshal(summary, &sum); err != nil {
		t.Fatalf("summary: %v", err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	flow, err := sessionapi.NewFlow(sessionapi.FlowConfig{AuthURL: f.URL + sessionapi.AuthorizePath, APIURL: f.URL,
		ClientID: sum.Web.ClientID, RedirectURI: sum.Web.RedirectURI, Scope: "openid offline_access",
		LoginClient: sum.LoginClient.UserID, Token: read(sum.LoginClient.PATFile)})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(_ sessionapi.Hop, req *http.Request, check loginhop.Check) error {
		resp, err := hc.Do(req.WithContext(ctx))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return check(&loginhop.Response{Status: resp.StatusCode, Header: resp.Header, Body: body})
	}
	if _, err := flow.Login(do, zitadelapi.UserName(sum.Users.Pattern, 0), read(sum.Users.PasswordFile)); err != nil {
		t.Fatal(err)
	}
}

// redactBody shows a captured body's keys, not its values (passwords,
// session tokens).
func redactBody(b []byte) string {
	var v any
	if len(b) == 0 || json.Unmarshal(b, &v) != nil {
		return strconv.Itoa(len(b)) + " bytes"
	}
	var keys func(any) string
	keys = func(v any) string {
		m, ok := v.(map[string]any)
		if !ok {
			return "…"
		}
		var parts []string
		for k, e := range m {
			parts = append(parts, k+":"+keys(e))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, " ") + "}"
	}
	return keys(v)
}

// checkComplete reads the calls the client's code makes — every
// c.call(ctx, "Name", ...) — from products/zitadel/zitadelapi's sources,
// adds the login's hops (sessionapi.Hop, each named after its call), and
// requires each to have been captured and verified.
func checkComplete(t *testing.T, verified map[string]bool) {
	srcs, err := filepath.Glob("../zitadelapi/*.go")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("products/zitadel/zitadelapi sources: %v", err)
	}
	calls := map[string]bool{}
	fset := token.NewFileSet()
	for _, src := range srcs {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, src, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ce, ok := n.(*ast.CallExpr)
			if sel, isSel := callee(ce, ok); isSel && sel == "call" && len(ce.Args) > 1 {
				if lit, ok := ce.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					calls[name] = true
				}
			}
			return true
		})
	}
	if len(calls) < 16 {
		t.Fatalf("found only %d calls in products/zitadel/zitadelapi: %v", len(calls), calls)
	}
	for h := range sessionapi.Hops {
		calls[sessionapi.Hop(h).String()] = true
	}
	oidc := 0
	for name := range calls {
		if !verified[name] {
			t.Errorf("the client's call %s was not captured and checked", name)
		}
		if zitadeltest.OIDCCalls[name] {
			oidc++
		}
	}
	t.Logf("all %d calls of products/zitadel/zitadelapi captured: %d checked against the definitions, %d OIDC", len(calls), len(calls)-oidc, oidc)
}

func callee(ce *ast.CallExpr, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	sel, ok := ce.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	return sel.Sel.Name, true
}

// checkMutations: the check rejects a misspelled field, a path no method
// maps, an unknown enum name, a body where the rule takes none, a wrong
// kind, and a misspelled answer field.
func checkMutations(t *testing.T, d *zitadeldefs.Defs) {
	tests := []struct {
		name, verb, path, body string
		answer                 string // checked as the answer when set
		wantErr                string // substring of the error
		noRoute                bool
	}{
		{name: "misspelled field", verb: "POST", path: "/management/v1/projects", body: `{"nmae":"idpbench"}`, wantErr: `unknown field "nmae"`},
		{name: "misspelled nested field", verb: "POST", path: "/v2/sessions", body: `{"checks":{"user":{"loginNmae":"u"}}}`, wantErr: `unknown field "loginNmae"`},
		{name: "unknown enum name", verb: "POST", path: "/management/v1/users/1/keys", body: `{"type":"KEY_TYPE_JSN"}`, wantErr: `invalid value for enum field type: "KEY_TYPE_JSN"`},
		{name: "wrong value kind", verb: "POST", path: "/admin/v1/members", body: `{"userId":"1","roles":"IAM_LOGIN_CLIENT"}`, wantErr: `unexpected token "IAM_LOGIN_CLIENT"`},
		{name: "unmapped path", verb: "POST", path: "/management/v1/projectz", body: `{"name":"x"}`, noRoute: true},
		{name: "unmapped verb", verb: "DELETE", path: "/v2/sessions", noRoute: true},
		{name: "v2 path under the v1 prefix", verb: "POST", path: "/management/v1/sessions", body: `{}`, noRoute: true},
		{name: "body on a GET", verb: "GET", path: "/management/v1/orgs/me", body: `{"id":"1"}`, wantErr: "the http rule takes none"},
		{name: "misspelled answer field", verb: "POST", path: "/v2/sessions", body: `{}`, answer: `{"sessionID":"1","sessionToken":"t"}`, wantErr: `unknown field "sessionID"`},
	}
	for _, tt := range tests {
		m, _, err := d.CheckRequest(tt.verb, tt.path, nil, []byte(tt.body))
		if tt.answer != "" && err == nil {
			_, err = d.CheckResponse(m, []byte(tt.answer))
		}
		switch {
		case err == nil:
			t.Errorf("%s: %s %s %s accepted", tt.name, tt.verb, tt.path, tt.body)
		case tt.noRoute && !errors.Is(err, zitadeldefs.ErrNoRoute):
			t.Errorf("%s: error %v, want ErrNoRoute", tt.name, err)
		case !tt.noRoute && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.wantErr)
		default:
			t.Logf("rejected, as it must be: %s: %v", tt.name, err)
		}
	}
}

// TestResolve: templates bind their variables, the more literal template
// wins, escaped segments are unescaped.
func TestResolve(t *testing.T) {
	d := defs(t)
	tests := []struct {
		verb, path, method string
		params             map[string]string
	}{
		{"POST", "/v2/users/human", "zitadel.user.v2.UserService.AddHumanUser", map[string]string{}},
		{"GET", "/v2/users/2913", "zitadel.user.v2.UserService.GetUserByID", map[string]string{"user_id": "2913"}},
		{"POST", "/v2/oidc/auth_requests/V2_2913", "zitadel.oidc.v2.OIDCService.CreateCallback", map[string]string{"auth_request_id": "V2_2913"}},
		{"GET", "/management/v1/projects/1/apps/2", "zitadel.management.v1.ManagementService.GetAppByID", map[string]string{"project_id": "1", "app_id": "2"}},
		{"POST", "/admin/v1/members/_search", "zitadel.admin.v1.AdminService.ListIAMMembers", map[string]string{}},
		{"GET", "/v2/users/a%2Fb", "zitadel.user.v2.UserService.GetUserByID", map[string]string{"user_id": "a/b"}},
	}
	for _, tt := range tests {
		m, err := d.Resolve(tt.verb, tt.path)
		if err != nil {
			t.Errorf("%s %s: %v", tt.verb, tt.path, err)
			continue
		}
		if string(m.Method.FullName()) != tt.method || !mapsEqual(m.Params, tt.params) {
			t.Errorf("%s %s: %s %v, want %s %v", tt.verb, tt.path, m.Method.FullName(), m.Params, tt.method, tt.params)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestLoadRejects: a directory that is not the pinned package is an error,
// not an empty registry.
func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	if _, err := zitadeldefs.Load(dir); err == nil {
		t.Error("Load of an empty directory succeeded")
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@zitadel/proto","version":"1.3.0"}`), 0o600)
	if _, err := zitadeldefs.Load(dir); err == nil || !strings.Contains(err.Error(), "want @zitadel/proto@1.3.1") {
		t.Errorf("Load of 1.3.0: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@zitadel/proto","version":"1.3.1"}`), 0o600)
	if _, err := zitadeldefs.Load(dir); err == nil || !strings.Contains(err.Error(), "es") {
		t.Errorf("Load without modules: %v", err)
	}
}
