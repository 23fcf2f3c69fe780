package zitadelapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/mint"
	"github.com/idpbench/idpbench/products/zitadel/zitadeltest"
)

const (
	testPAT      = "pat-Secret-0123456789abcdef"
	testLoginPAT = "login-pat-Secret-9876543210"
	testOrg      = "291356340231487457"
)

// recordedCase calls the client once against the replay of one recorded
// call and returns what the client decoded.
type recordedCase struct {
	rec  string
	vars map[string]string
	call func(ctx context.Context, c *Client) (any, error)
	want any
}

func recordedCases() []recordedCase {
	web := WebApp{Name: "idpbench-web", RedirectURI: "http://localhost:9999/cb"}
	return []recordedCase{
		{rec: "get_my_org", call: func(ctx context.Context, c *Client) (any, error) { return c.WithOrg("").MyOrg(ctx) },
			want: Org{ID: testOrg, Name: "ZITADEL", PrimaryDomain: "zitadel.localhost"}},
		{rec: "add_project", call: func(ctx context.Context, c *Client) (any, error) { return c.AddProject(ctx, "idpbench") },
			want: "291356606662524897"},
		{rec: "add_api_app", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AddAPIApp(ctx, "291356606662524897", "idpbench-api")
		}, want: App{AppID: "291356752432972001", ClientID: "291356752433037537"}},
		{rec: "add_app_key", call: func(ctx context.Context, c *Client) (any, error) {
			k, err := c.AddAppKey(ctx, "291356606662524897", "291356752432972001")
			return keySummary(k), err
		}, want: "291357009221066465 application 291357009221066465 app=291356752432972001 client=291356752433037537 user="},
		{rec: "add_oidc_app", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AddOIDCApp(ctx, "291356606662524897", web)
		}, want: App{AppID: "291357711189231073", ClientID: "291357711189296609", ClientSecret: "Yx7oP0c9kq2Vd1RfT4mLz8sWb5nHj3GaE6uQiXyCvBtNrMpKw0lD2fS"}},
		{rec: "add_machine_user", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AddMachineUser(ctx, "idpbench-m2m", false)
		}, want: "291357180998402273"},
		{rec: "add_machine_key", call: func(ctx context.Context, c *Client) (any, error) {
			k, err := c.AddMachineKey(ctx, "291357180998402273")
			return keySummary(k), err
		}, want: "291357260770263265 serviceaccount 291357260770263265 app= client= user=291357180998402273"},
		{rec: "generate_machine_secret", call: func(ctx context.Context, c *Client) (any, error) {
			return c.GenerateMachineSecret(ctx, "291357391389344225")
		}, want: ClientCredentials{ClientID: "idpbench-cc", ClientSecret: "kT3vQ9xNbW7mR2pLc8ZfY4hJs6Ad1GeUoVi0KnXqMtBwPyCrEzSl5Hd"}},
		{rec: "add_personal_access_token", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AddPersonalAccessToken(ctx, "291357502765880289")
		}, want: PAT{TokenID: "291357583019690465", Token: "Qm9ndXMtUEFULWZvci10aGUtcmVjb3JkZWQtc2hhcGUtb25seQ"}},
		{rec: "add_iam_member", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.AddIAMMember(ctx, "291357502765880289", "IAM_LOGIN_CLIENT")
		}, want: nil},
		{rec: "list_iam_members", call: func(ctx context.Context, c *Client) (any, error) { return c.ListIAMMembers(ctx) },
			want: []Member{{UserID: "291356340231553000", Roles: []string{"IAM_OWNER"}}, {UserID: "291357502765880289", Roles: []string{"IAM_LOGIN_CLIENT"}}}},
		{rec: "add_human_user", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AddHumanUser(ctx, Human{Username: "bench-user0", OrgID: testOrg, GivenName: "Bench", FamilyName: "User",
				Email: "bench-user0@example.com", Password: "Ib-7x-Correct-Horse"})
		}, want: "291357841497868769"},
		{rec: "get_user_by_id", call: func(ctx context.Context, c *Client) (any, error) { return c.GetUser(ctx, "291357841497868769") },
			want: User{UserID: "291357841497868769", Username: "bench-user0", LoginNames: []string{"bench-user0"}, PreferredLoginName: "bench-user0"}},
		{rec: "get_app_by_id", call: func(ctx context.Context, c *Client) (any, error) {
			return c.GetApp(ctx, "291356606662524897", "291357711189231073")
		}, want: "idpbench-web"},
		{rec: "get_my_user", call: func(ctx context.Context, c *Client) (any, error) { return c.WithToken(testLoginPAT).Me(ctx) },
			want: "291357502765880289"},
		{rec: "discovery", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.Discovery(ctx, "http://localhost:8080/")
		}, want: nil},
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func keySummary(k Key) string {
	var kf mint.KeyFile
	json.Unmarshal(k.File, &kf)
	if !strings.HasPrefix(kf.Key, "-----BEGIN RSA PRIVATE KEY-----") {
		return "key file without a PEM key"
	}
	return k.ID + " " + kf.Type + " " + kf.KeyID + " app=" + kf.AppID + " client=" + kf.ClientID + " user=" + kf.UserID
}

// TestRecordedCalls runs each call against the replay of its recorded
// shape: the replay checks method, path, query, headers and body field by
// field; the test checks what the client decoded from the recorded answer.
func TestRecordedCalls(t *testing.T) {
	tested := map[string]bool{}
	for _, tt := range recordedCases() {
		tested[tt.rec] = true
		t.Run(tt.rec, func(t *testing.T) {
			rec := zitadeltest.MustLoad(t, tt.rec)
			vars := map[string]string{"PAT": testPAT, "LOGIN_PAT": testLoginPAT, "ORG": testOrg}
			for k, v := range tt.vars {
				vars[k] = v
			}
			srv := zitadeltest.NewReplay(t, rec, vars)
			c := New(srv.URL, testPAT, &http.Client{}).WithOrg(testOrg)
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("%s: %v", rec.Call, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s decoded %#v, want %#v", rec.Call, got, tt.want)
			}
			if n := srv.Hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
	for _, n := range []string{"authorize", "create_session", "create_callback"} {
		tested[n] = true // the Session API login's hops: zitadeltest's TestLogin
	}
	// The code exchange is the caller's (mintpool's and loadstep's own):
	// the stand-in answers it from this record and holds their requests
	// to its shape (internal/mint's zitadel tests; zitadeltest's
	// TestAdapterAgainstFake, both tools).
	tested["token_authorization_code"] = true
	for _, n := range zitadeltest.Names() {
		if !tested[n] {
			t.Errorf("recorded call %s has no test", n)
		}
	}
}

// TestRecordedErrors answers each call with each recorded error body.
func TestRecordedErrors(t *testing.T) {
	for _, ec := range zitadeltest.Errors(t) {
		var want struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(ec.Body, &want)
		for _, tt := range recordedCases() {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(ec.Status)
				w.Write(ec.Body)
			}))
			c := New(srv.URL, testPAT, &http.Client{}).WithOrg(testOrg)
			_, err := tt.call(context.Background(), c)
			srv.Close()
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Errorf("%s, HTTP %d: error %v is not an *APIError", tt.rec, ec.Status, err)
				continue
			}
			rec := zitadeltest.MustLoad(t, tt.rec)
			if ae.Status != ec.Status || ae.Message != want.Message || !strings.HasPrefix(ae.Call, rec.Call+" (") ||
				!strings.Contains(ae.Call, rec.Request.Method+" ") {
				t.Errorf("%s: got %+v, want status %d, message %q, call %s", tt.rec, ae, ec.Status, want.Message, rec.Call)
			}
			if s := err.Error(); !strings.Contains(s, "HTTP "+itoa(int64(ec.Status))) || strings.Contains(s, testPAT) || strings.Contains(s, testLoginPAT) {
				t.Errorf("%s: error text %q", tt.rec, s)
			}
		}
	}
}

func TestErrorRedactsToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":16,"message":"token ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + ` is invalid"}`))
	}))
	defer srv.Close()
	_, err := New(srv.URL, testPAT, &http.Client{}).AddProject(context.Background(), "p")
	if err == nil || strings.Contains(err.Error(), testPAT) || !strings.Contains(err.Error(), "token [redacted] is invalid") {
		t.Errorf("error %v", err)
	}
}

func TestNewPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		p := NewPassword()
		var up, low, digit, sym bool
		for _, r := range p {
			switch {
			case r >= 'A' && r <= 'Z':
				up = true
			case r >= 'a' && r <= 'z':
				low = true
			case r >= '0' && r <= '9':
				digit = true
			default:
				sym = true
			}
		}
		if !up || !low || !digit || !sym || len(p) < 20 || len(p) > 72 || seen[p] {
			t.Fatalf("password %q does not meet the policy or repeats", p)
		}
		seen[p] = true
	}
}
