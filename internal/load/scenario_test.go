package load

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// expectForm checks a form POST: every field in want has that value,
// every field in absent is missing.
func expectForm(r *http.Request, want map[string]string, absent ...string) error {
	if r.Method != http.MethodPost {
		return fmt.Errorf("method %s, want POST", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		return fmt.Errorf("Content-Type %q", ct)
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	for k, v := range want {
		if got := r.PostForm.Get(k); got != v {
			return fmt.Errorf("form %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range absent {
		if r.PostForm.Has(k) {
			return fmt.Errorf("form has %s, want none", k)
		}
	}
	return nil
}

func expectBasic(r *http.Request, id, secret string) error {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	if got := r.Header.Get("Authorization"); got != want {
		return fmt.Errorf("Authorization %q, want %q", got, want)
	}
	return nil
}

func expectNoAuth(r *http.Request) error {
	if got := r.Header.Get("Authorization"); got != "" {
		return fmt.Errorf("Authorization %q, want none", got)
	}
	return nil
}

func all(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

const secret = "s3cr:et/+"

func TestScenarios(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(c *Config)
		verify func(r *http.Request) error
		good   string
		bad    []string
	}{
		{
			name:   "discovery",
			setup:  func(c *Config) { c.Scenario = schema.ScenarioDiscovery },
			verify: func(r *http.Request) error { return all(expectMethod(r, "GET"), expectNoAuth(r)) },
			good:   `{"issuer":"http://op/"}`,
			bad:    []string{`{"note":"issuer"}`, `{"issuer":""}`, `issuer`, `[]`},
		},
		{
			name: "client_credentials basic with scope",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientSecret, c.Scope = schema.ScenarioClientCredentials, "cid", secret, "openid"
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"grant_type": "client_credentials", "scope": "openid"},
					"client_id", "client_secret"), expectBasic(r, "cid", secret))
			},
			good: `{"access_token":"at","token_type":"Bearer"}`,
			bad:  []string{`{"token_type":"access_token"}`, `{"access_token":5}`, `{"access_token":null}`},
		},
		{
			name: "client_credentials post",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientSecret, c.ClientAuth = schema.ScenarioClientCredentials, "cid", secret, AuthPost
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"grant_type": "client_credentials",
					"client_id": "cid", "client_secret": secret}, "scope"), expectNoAuth(r))
			},
			good: `{"access_token":"at"}`,
			bad:  []string{`{}`},
		},
		{
			name: "introspect basic",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientSecret = schema.ScenarioIntrospect, "rs", secret
				c.Pool = testPool("p", "tok1")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"token": "tok1"}, "client_id"), expectBasic(r, "rs", secret))
			},
			good: `{"active":true,"sub":"x"}`,
			bad:  []string{`{"active":false}`, `{"active":"true"}`, `{"note":"\"active\":true"}`},
		},
		{
			name: "introspect post",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientSecret, c.ClientAuth = schema.ScenarioIntrospect, "rs", secret, AuthPost
				c.Pool = testPool("p", "tok1")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"token": "tok1", "client_id": "rs", "client_secret": secret}),
					expectNoAuth(r))
			},
			good: `{"active":true}`,
			bad:  []string{`{"active":1}`},
		},
		{
			name: "introspect none",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientAuth = schema.ScenarioIntrospect, "pub", AuthNone
				c.Pool = testPool("p", "tok1")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"token": "tok1", "client_id": "pub"}, "client_secret"),
					expectNoAuth(r))
			},
			good: `{"active":true}`,
			bad:  []string{`{"active":false}`},
		},
		{
			name: "introspect assertion",
			setup: func(c *Config) {
				c.Scenario, c.ClientAuth = schema.ScenarioIntrospect, AuthAssertion
				c.Pool, c.AssertionPool = testPool("p", "tok1"), testPool("a", "jwt1")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"token": "tok1", "client_assertion": "jwt1",
					"client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
					"client_id", "client_secret"), expectNoAuth(r))
			},
			good: `{"active":true}`,
			bad:  []string{`{"active":false}`},
		},
		{
			name: "refresh basic",
			setup: func(c *Config) {
				c.Scenario, c.ClientID, c.ClientSecret = schema.ScenarioRefresh, "cid", secret
				c.Pool = testPool("p", "rt1")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"grant_type": "refresh_token", "refresh_token": "rt1"}),
					expectBasic(r, "cid", secret))
			},
			good: `{"access_token":"at","refresh_token":"rt1"}`,
			bad:  []string{`{"refresh_token":"rt1"}`},
		},
		{
			name:  "userinfo",
			setup: func(c *Config) { c.Scenario, c.Pool = schema.ScenarioUserinfo, testPool("p", "at1") },
			verify: func(r *http.Request) error {
				if got := r.Header.Get("Authorization"); got != "Bearer at1" {
					return fmt.Errorf("Authorization %q", got)
				}
				return expectMethod(r, "GET")
			},
			good: `{"sub":"u1"}`,
			bad:  []string{`{"sub":""}`, `{"name":"sub"}`},
		},
		{
			name: "jwt_bearer",
			setup: func(c *Config) {
				c.Scenario, c.Scope, c.Pool = schema.ScenarioJWTBearer, "openid profile", testPool("p", "eyJ.a.b")
			},
			verify: func(r *http.Request) error {
				return all(expectForm(r, map[string]string{"assertion": "eyJ.a.b", "scope": "openid profile",
					"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer"}, "client_id"), expectNoAuth(r))
			},
			good: `{"access_token":"at"}`,
			bad:  []string{`{"error":"access_token"}`},
		},
		{
			name: "request with pool in body and header",
			setup: func(c *Config) {
				c.Scenario, c.Method, c.Body = schema.ScenarioRequest, "PUT", `{"token":"{{pool}}"}`
				c.Headers = []Header{{"X-Token", "t={{pool}}"}, {"Content-Type", "application/json"}}
				c.Expect, c.Pool = "pong", testPool("p", "abc")
			},
			verify: func(r *http.Request) error {
				var b [64]byte
				n, _ := r.Body.Read(b[:])
				switch {
				case r.Method != "PUT":
					return fmt.Errorf("method %s", r.Method)
				case string(b[:n]) != `{"token":"abc"}`:
					return fmt.Errorf("body %q", b[:n])
				case r.Header.Get("X-Token") != "t=abc":
					return fmt.Errorf("X-Token %q", r.Header.Get("X-Token"))
				}
				return nil
			},
			good: `ping pong`,
			bad:  []string{`ping`},
		},
		{
			name:   "request without expect passes any 2xx",
			setup:  func(c *Config) { c.Scenario = schema.ScenarioRequest },
			verify: func(r *http.Request) error { return expectMethod(r, "GET") },
			good:   `not json`,
		},
	}
	for _, tt := range tests {
		for i, body := range append([]string{tt.good}, tt.bad...) {
			for _, engine := range engines {
				t.Run(fmt.Sprintf("%s/%s/body%d", engine, tt.name, i), func(t *testing.T) {
					t.Parallel()
					srv, firstErr := verifyingServer(t, tt.verify, body)
					c := testConfig(t, srv.URL, "")
					c.Duration, c.Engine = 80*time.Millisecond, engine
					tt.setup(c)
					s := mustRun(t, c)
					for try := 0; s.Requests == 0 && try < 3; try++ {
						// A loaded machine can keep every worker from starting
						// inside a short window; give it a longer one.
						c.Duration *= 4
						s = mustRun(t, c)
					}
					if err := firstErr(); err != nil {
						t.Fatalf("server saw a wrong request: %v", err)
					}
					if s.Requests == 0 {
						t.Fatal("no requests")
					}
					wantOK, wantCheck := s.Requests, int64(0)
					if i > 0 {
						wantOK, wantCheck = 0, s.Requests
					}
					if s.OK != wantOK || s.Errors.Check != wantCheck {
						t.Errorf("body %q: ok %d check %d of %d requests, want ok %d check %d",
							body, s.OK, s.Errors.Check, s.Requests, wantOK, wantCheck)
					}
					if want := wantRule(c); s.Check != want {
						t.Errorf("check %q, want %q", s.Check, want)
					}
				})
			}
		}
	}
}

func expectMethod(r *http.Request, m string) error {
	if r.Method != m {
		return fmt.Errorf("method %s, want %s", r.Method, m)
	}
	return nil
}

// verifyingServer answers body with 200 and remembers the first request
// verify rejects.
func verifyingServer(t *testing.T, verify func(*http.Request) error, body string) (*httptest.Server, func() error) {
	var mu sync.Mutex
	var first error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := verify(r); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() error { mu.Lock(); defer mu.Unlock(); return first }
}

// wantRule is the success rule a step of c must record, spelled out as the
// report and the design state it (schema/check.go must not drift from it).
func wantRule(c *Config) string {
	if c.Scenario == schema.ScenarioIntrospect && c.IntrospectCheck == CheckAnswered {
		return "2xx json active=bool"
	}
	if c.Scenario == schema.ScenarioRequest {
		if c.Expect == "" {
			return "2xx"
		}
		return "2xx body contains " + strconv.Quote(c.Expect)
	}
	return map[string]string{
		schema.ScenarioDiscovery:         "2xx json issuer",
		schema.ScenarioClientCredentials: "2xx json access_token",
		schema.ScenarioJWTBearer:         "2xx json access_token",
		schema.ScenarioRefresh:           "2xx json access_token",
		schema.ScenarioIntrospect:        "2xx json active=true",
		schema.ScenarioUserinfo:          "2xx json sub",
	}[c.Scenario]
}

// TestNon2xxNeverOK: a 4xx or 5xx whose body would pass the check is a
// failure in every single-request scenario.
func TestNon2xxNeverOK(t *testing.T) {
	body := `{"issuer":"i","access_token":"a","refresh_token":"r","active":true,"sub":"s"}`
	for _, status := range []int{400, 401, 403, 404, 500, 503} {
		for _, sc := range []string{schema.ScenarioDiscovery, schema.ScenarioClientCredentials, schema.ScenarioIntrospect,
			schema.ScenarioUserinfo, schema.ScenarioRefresh, schema.ScenarioJWTBearer, schema.ScenarioRequest} {
			t.Run(fmt.Sprintf("%s/%d", sc, status), func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(status)
					_, _ = io.WriteString(w, body)
				}))
				t.Cleanup(srv.Close)
				c := testConfig(t, srv.URL, sc)
				c.ClientID, c.ClientSecret = "cid", secret
				// Paced, so that the 4 requests intended in the short
				// window are all sent, however late a busy machine runs
				// them (a closed loop may send none in 80 ms), and none
				// is given up before the timeout.
				c.Rate, c.Duration, c.Timeout = 50, 80*time.Millisecond, 30*time.Second
				if poolScenario(sc) {
					c.Pool = testPool("p", "cred")
				}
				s := mustRun(t, c)
				if s.Requests != 4 || s.OK != 0 || s.Errors.Non2xx != s.Requests {
					t.Errorf("status %d: ok %d non2xx %d of %d requests, want 4, none ok", status, s.OK, s.Errors.Non2xx, s.Requests)
				}
			})
		}
	}
}
