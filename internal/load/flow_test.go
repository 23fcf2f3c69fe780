package load

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
	"github.com/idpbench/idpbench/internal/schema"
)

// flowConfig is a short auth_code or client_credentials_login step: no
// warmup, so every iteration the fakes see is counted.
func flowConfig(t *testing.T, target, scenario string) *Config {
	t.Helper()
	cfg := testConfig(t, target, scenario)
	cfg.Duration, cfg.Interval = 300*time.Millisecond, 100*time.Millisecond
	// A hop the fakes answer in a ms can stall for seconds on a busy
	// machine; no test here is about the timeout, so a stall must not
	// fail an iteration.
	cfg.Timeout = 30 * time.Second
	cfg.ClientID, cfg.ClientSecret = fakeClient, fakeSecret
	cfg.Engine = EngineRaw // ignored: iteration scenarios run on net/http
	return cfg
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func hydraConfig(t *testing.T, h *fakeHydra) *Config {
	cfg := flowConfig(t, h.public.URL+"/oauth2/auth", schema.ScenarioAuthCode)
	cfg.Login, cfg.TokenURL, cfg.AdminURL = LoginAdminAccept, mustURL(t, h.public.URL+"/oauth2/token"), mustURL(t, h.admin.URL+"/")
	cfg.RedirectURI, cfg.Username, cfg.Users, cfg.Scope = fakeRedirect, "user%d", 5, "openid offline_access"
	return cfg
}

func formConfig(t *testing.T, f *formlogintest.OP) *Config {
	cfg := flowConfig(t, f.Server.URL+"/auth", schema.ScenarioAuthCode)
	cfg.Login = LoginForm
	if f.Refop {
		cfg.Login = LoginFormPage
	}
	cfg.ClientID, cfg.ClientSecret = formlogintest.ClientID, formlogintest.ClientSecret
	cfg.TokenURL, cfg.RedirectURI = mustURL(t, f.Server.URL+"/token"), formlogintest.RedirectURI
	cfg.Username, cfg.Users, cfg.Password = "user%d", 3, formlogintest.Password
	return cfg
}

func zitadelConfig(t *testing.T, z *fakeZitadel) *Config {
	cfg := flowConfig(t, z.srv.URL+"/oauth/v2/authorize", schema.ScenarioAuthCode)
	cfg.Login, cfg.TokenURL, cfg.AdminURL = LoginSessionAPI, mustURL(t, z.srv.URL+"/oauth/v2/token"), mustURL(t, z.srv.URL+"/")
	cfg.RedirectURI, cfg.Username, cfg.Users, cfg.Password = fakeRedirect, "bench-user%d", 4, fakePassword
	cfg.LoginClient, cfg.LoginClientToken, cfg.Scope = fakeZitadelLoginClient, fakeZitadelPAT, "openid offline_access"
	return cfg
}

// fakeCounts is what a fake saw: completed code exchanges and the users
// that logged in.
type fakeCounts interface {
	exchanged() int64
	userCount() int
}

func (f *fakeOP) exchanged() int64 { return f.tokens.Load() }
func (f *fakeOP) userCount() int {
	n := 0
	f.users.Range(func(any, any) bool { n++; return true })
	return n
}

// formCounts are the form OP's fakeCounts.
type formCounts struct{ *formlogintest.OP }

func (f formCounts) exchanged() int64 { return f.Exchanged() }
func (f formCounts) userCount() int   { return len(f.Logins()) }

func TestAuthCodeLogins(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T) (*Config, fakeCounts)
		order    []string
		users    int
		optional []string // hops sent by some iterations only
	}{
		{"hydra", func(t *testing.T) (*Config, fakeCounts) {
			h := newFakeHydra(t)
			return hydraConfig(t, h), h
		}, []string{NameAuthorize, NameAccept, NameVerifier, NameConsent, NameCallback, NameToken}, 5, nil},
		{"keycloak", func(t *testing.T) (*Config, fakeCounts) {
			f := formlogintest.NewOP(t, false)
			return formConfig(t, f), formCounts{f}
		}, []string{NameAuthorize, NameSubmit, NameToken}, 3, nil},
		{"refop", func(t *testing.T) (*Config, fakeCounts) {
			f := formlogintest.NewOP(t, true)
			return formConfig(t, f), formCounts{f}
		}, []string{NameAuthorize, NameLoginForm, NameSubmit, NameCallback, NameToken}, 3, nil},
		{"keycloak's consent, once a user, its own field names", func(t *testing.T) (*Config, fakeCounts) {
			f := formlogintest.NewOP(t, false)
			f.Consent, f.UserInput, f.Require = formlogintest.ConsentOnce, [2]string{"login", "email"}, [2]string{"tenant", "a"}
			cfg := formConfig(t, f)
			cfg.LoginForm = login.FormOptions{Consent: true, Fields: [][2]string{{"tenant", "a"}}}
			return cfg, formCounts{f}
		}, []string{NameAuthorize, NameSubmit, login.NameConsentPage, NameConsent, login.NameResume, NameToken}, 3,
			[]string{login.NameConsentPage, NameConsent, login.NameResume}},
		{"zitadel", func(t *testing.T) (*Config, fakeCounts) {
			z := newFakeZitadel(t)
			return zitadelConfig(t, z), z
		}, []string{NameAuthorize, NameSession, NameFinalize, NameToken}, 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // mostly waiting on the fakes
			cfg, fake := tt.setup(t)
			// Paced, so that the 10 iterations intended in the window
			// are all run however slow the machine, enough to log in
			// every user.
			cfg.Rate, cfg.Duration = 20, 500*time.Millisecond
			s := mustRunFlow(t, cfg, tt.optional...)
			if s.Requests != 10 || s.OK != s.Requests || s.Errors.Total() != 0 {
				t.Fatalf("iterations %d ok %d errors %+v by name %+v", s.Requests, s.OK, s.Errors, s.RequestsByName)
			}
			if !slices.Equal(s.RequestOrder, tt.order) {
				t.Errorf("request_order %v, want %v", s.RequestOrder, tt.order)
			}
			// Every iteration of the window (no warmup) got its token, and
			// none the fake served is missing or counted twice.
			if got := fake.exchanged(); got != s.OK {
				t.Errorf("fake exchanged %d codes, step has %d ok iterations", got, s.OK)
			}
			if got := fake.userCount(); got != tt.users {
				t.Errorf("%d distinct users logged in, want %d (round robin over --users)", got, tt.users)
			}
			// A consent (its form in the submit's answer here) is asked once
			// a user: its request is sent then only; the other optional hops never.
			perIteration, optional := int64(len(tt.order)-len(tt.optional)), int64(0)
			for _, name := range tt.optional {
				c := s.RequestsByName[name]
				want := int64(0)
				if name == NameConsent {
					want = int64(tt.users)
				}
				if c.Requests != want || c.OK != c.Requests {
					t.Errorf("%s: %d requests, %d ok; want %d", name, c.Requests, c.OK, want)
				}
				optional += c.Requests
			}
			if s.HTTPRequests != s.Requests*perIteration+optional {
				t.Errorf("http_requests %d for %d iterations of %d requests and %d optional", s.HTTPRequests, s.Requests, perIteration, optional)
			}
			if s.Driver.Engine != EngineNetHTTP {
				t.Errorf("engine %q", s.Driver.Engine)
			}
		})
	}
}

// TestAuthCodeFailures: a failed hop fails its iteration, in its class,
// under its name, and the iteration stops there.
func TestAuthCodeFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) *Config
		failing string
		class   func(schema.Errors) int64
		all     bool // every iteration fails
	}{
		{"hydra lost consent cookie -> error=request_forbidden", func(t *testing.T) *Config {
			h := newFakeHydra(t)
			h.dropConsent = true
			return hydraConfig(t, h)
		}, NameCallback, func(e schema.Errors) int64 { return e.Check }, true},
		{"hydra accept sent to the public port -> 404/405", func(t *testing.T) *Config {
			h := newFakeHydra(t)
			cfg := hydraConfig(t, h)
			cfg.AdminURL = mustURL(t, h.public.URL) // accept on the wrong server: 404/405
			return cfg
		}, NameAccept, func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"hydra authorize answers 200, not a redirect", func(t *testing.T) *Config {
			page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprint(w, "<html>a login page</html>")
			}))
			t.Cleanup(page.Close)
			cfg := hydraConfig(t, newFakeHydra(t))
			cfg.URL = mustURL(t, page.URL+"/oauth2/auth")
			return cfg
		}, NameAuthorize, func(e schema.Errors) int64 { return e.Check }, true},
		{"keycloak wrong password -> the form again", func(t *testing.T) *Config {
			cfg := formConfig(t, formlogintest.NewOP(t, false))
			cfg.Password = "wrong"
			return cfg
		}, NameSubmit, func(e schema.Errors) int64 { return e.Check }, true},
		{"refop page without a POST form", func(t *testing.T) *Config {
			f := formlogintest.NewOP(t, true)
			f.BadPage = true
			return formConfig(t, f)
		}, NameLoginForm, func(e schema.Errors) int64 { return e.Check }, true},
		{"refop wrong redirect uri", func(t *testing.T) *Config {
			cfg := formConfig(t, formlogintest.NewOP(t, true))
			cfg.RedirectURI = "http://127.0.0.1/other"
			return cfg
		}, NameAuthorize, func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"keycloak token endpoint fails every 3rd", func(t *testing.T) *Config {
			f := formlogintest.NewOP(t, false)
			f.FailNth = 3
			return formConfig(t, f)
		}, NameToken, func(e schema.Errors) int64 { return e.Non2xx }, false},
		{"zitadel without the login client header -> login v1", func(t *testing.T) *Config {
			cfg := zitadelConfig(t, newFakeZitadel(t))
			cfg.LoginClient = "someone-else"
			return cfg
		}, NameAuthorize, func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"zitadel wrong password", func(t *testing.T) *Config {
			cfg := zitadelConfig(t, newFakeZitadel(t))
			cfg.Password = "wrong"
			return cfg
		}, NameSession, func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"zitadel wrong login client token", func(t *testing.T) *Config {
			cfg := zitadelConfig(t, newFakeZitadel(t))
			cfg.LoginClientToken = "expired"
			return cfg
		}, NameSession, func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"zitadel callback with another state", func(t *testing.T) *Config {
			z := newFakeZitadel(t)
			z.badState = true
			return zitadelConfig(t, z)
		}, NameFinalize, func(e schema.Errors) int64 { return e.Check }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // mostly waiting on the fakes
			cfg := tt.setup(t)
			// Paced, so that the 10 iterations intended in the window
			// are all run however slow the machine: enough for one that
			// fails every 3rd to have failed and passed.
			cfg.Rate, cfg.Duration = 20, 500*time.Millisecond
			s := mustRunFlow(t, cfg)
			named := s.RequestsByName[tt.failing]
			if s.Requests != 10 || tt.class(named.Errors) != s.Errors.Total() || s.Errors.Total() == 0 {
				t.Fatalf("iterations %d, errors %+v; %s errors %+v", s.Requests, s.Errors, tt.failing, named.Errors)
			}
			if tt.all != (s.OK == 0) {
				t.Errorf("ok %d of %d iterations (all failing: %v)", s.OK, s.Requests, tt.all)
			}
			// The iteration stopped at the failing hop: nothing after it
			// was sent for the failed iterations.
			if i := slices.Index(s.RequestOrder, tt.failing); i+1 < len(s.RequestOrder) {
				if next := s.RequestsByName[s.RequestOrder[i+1]]; next.Requests != named.OK {
					t.Errorf("%s sent %d times after %d ok %s", s.RequestOrder[i+1], next.Requests, named.OK, tt.failing)
				}
			}
		})
	}
}

func TestClientCredentialsLogin(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		noSub    bool
		wantFail func(schema.Errors) int64 // userinfo failures (nil = none)
	}{
		{"2xx with a sub", 0, false, nil},
		{"200 without sub (Hydra, a client's token)", 0, true, func(e schema.Errors) int64 { return e.Check }},
		{"403 (the reference OP, a client's token)", 403, false, func(e schema.Errors) int64 { return e.Non2xx }},
		{"401", 401, false, func(e schema.Errors) int64 { return e.Non2xx }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // mostly waiting on the fakes
			f := newFakeCC(t)
			f.userStatus, f.noSub = tt.status, tt.noSub
			cfg := flowConfig(t, f.srv.URL+"/token", schema.ScenarioClientCredentialsLogin)
			cfg.UserinfoURL = mustURL(t, f.srv.URL+"/userinfo")
			s := mustRunFlow(t, cfg)
			if s.Check != schema.CheckCCLogin {
				t.Errorf("check %q, want %q", s.Check, schema.CheckCCLogin)
			}
			ui, tok := s.RequestsByName[NameUserinfo], s.RequestsByName[NameToken]
			if s.Requests == 0 || tok.Requests != s.Requests || tok.OK != s.Requests || ui.Requests != s.Requests {
				t.Fatalf("iterations %d, oidc_token %+v, oidc_user_info %d", s.Requests, tok, ui.Requests)
			}
			if got := f.userinfo.Load(); got != ui.Requests {
				t.Errorf("fake answered %d userinfo requests with the token, step counted %d", got, ui.Requests)
			}
			want := int64(0)
			if tt.wantFail != nil {
				want = s.Requests
				if tt.wantFail(ui.Errors) != want {
					t.Errorf("oidc_user_info errors %+v, want all %d in the class", ui.Errors, want)
				}
			}
			if s.Errors.Total() != want {
				t.Errorf("failed iterations %d, want %d", s.Errors.Total(), want)
			}
		})
	}
}

// TestFlowRate: in rate mode an iteration is what is paced; the schedule
// fixes how many are due in the window.
func TestFlowRate(t *testing.T) {
	f := newFakeCC(t)
	cfg := flowConfig(t, f.srv.URL+"/token", schema.ScenarioClientCredentialsLogin)
	cfg.UserinfoURL, cfg.Rate, cfg.Duration = mustURL(t, f.srv.URL+"/userinfo"), 100, 400*time.Millisecond
	s := mustRunFlow(t, cfg)
	if s.Requests != 40 || s.RequestsByName[NameUserinfo].Requests != 40 || s.LatencyModel != schema.ModelOpenLoop {
		t.Errorf("%d iterations, %d userinfo, model %q: want the 40 due at 100/s in 400 ms",
			s.Requests, s.RequestsByName[NameUserinfo].Requests, s.LatencyModel)
	}
}

// mustRunFlow runs an iteration step and checks its invariants.
func mustRunFlow(t *testing.T, cfg *Config, optional ...string) *schema.Step {
	t.Helper()
	s := mustRun(t, cfg)
	checkFlowConsistent(t, s, optional...)
	return s
}

// checkFlowConsistent asserts the iteration-step invariants: every name's
// requests = ok + failed and its histogram holds its responses; the named
// failures are the failed iterations, class by class (an iteration fails
// at exactly one request); the first name was sent by every iteration and
// each later one by the iterations that passed the one before, an
// optional hop (a form login's consent) by some of them at most, failing
// only those it was sent by; status_codes and http_requests are the
// sums over the names; the iteration histogram holds the iterations that
// ended with a response.
func checkFlowConsistent(t *testing.T, s *schema.Step, optional ...string) {
	t.Helper()
	if s.CountUnit != schema.CountIterations || len(s.RequestOrder) == 0 || len(s.RequestsByName) != len(s.RequestOrder) {
		t.Fatalf("count_unit %q, request_order %v, %d names", s.CountUnit, s.RequestOrder, len(s.RequestsByName))
	}
	var failed schema.Errors
	var httpRequests int64
	codes := map[string]int64{}
	prevOK := s.Requests
	for _, name := range s.RequestOrder {
		nr := s.RequestsByName[name]
		if slices.Contains(optional, name) {
			if nr.OK+nr.Errors.Total() != nr.Requests || nr.Requests > prevOK {
				t.Errorf("%s (optional): requests %d, ok %d, failed %d; the hop before passed %d", name, nr.Requests, nr.OK, nr.Errors.Total(), prevOK)
			}
			prevOK -= nr.Errors.Total()
		} else {
			if nr.OK+nr.Errors.Total() != nr.Requests || nr.Requests != prevOK {
				t.Errorf("%s: requests %d, ok %d, failed %d; the hop before passed %d", name, nr.Requests, nr.OK, nr.Errors.Total(), prevOK)
			}
			prevOK = nr.OK
		}
		failed = failed.Add(nr.Errors)
		httpRequests += nr.Requests
		h, err := schema.DecodeHistogram(nr.Histogram)
		if err != nil {
			t.Fatalf("%s histogram: %v", name, err)
		}
		var responses int64
		for code, n := range nr.StatusCodes {
			responses += n
			codes[code] += n
		}
		if h.TotalCount() != responses || schema.Summarize(h) != nr.LatencyMS {
			t.Errorf("%s: histogram count %d for %d responses, latency_ms %+v", name, h.TotalCount(), responses, nr.LatencyMS)
		}
	}
	if failed != s.Errors || prevOK != s.OK || httpRequests != s.HTTPRequests {
		t.Errorf("named failures %+v vs iterations %+v; last hop ok %d vs ok %d; http_requests %d vs %d",
			failed, s.Errors, prevOK, s.OK, httpRequests, s.HTTPRequests)
	}
	for code, n := range codes {
		if s.StatusCodes[code] != n {
			t.Errorf("status_codes[%s] = %d, names sum to %d", code, s.StatusCodes[code], n)
		}
	}
	if len(codes) != len(s.StatusCodes) {
		t.Errorf("status_codes %v, names %v", s.StatusCodes, codes)
	}
	h, _ := schema.DecodeHistogram(s.Histogram)
	if want := s.OK + s.Errors.Non2xx + s.Errors.Check; h.TotalCount() != want {
		t.Errorf("iteration histogram holds %d, want %d (ok + non2xx + check iterations)", h.TotalCount(), want)
	}
}

func TestFlowValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"unknown login", func(c *Config) { c.Login = "okta" }, "--login"},
		{"hydra without admin", func(c *Config) { c.Login, c.AdminURL = LoginAdminAccept, nil }, "--admin-url"},
		{"zitadel without api url", func(c *Config) { c.Login, c.LoginClient, c.LoginClientToken = LoginSessionAPI, "1", "t" }, "--admin-url"},
		{"zitadel without login client", func(c *Config) {
			c.Login, c.AdminURL, c.LoginClientToken = LoginSessionAPI, mustURL(t, "http://op/"), "t"
		}, "--login-client"},
		{"zitadel without token", func(c *Config) {
			c.Login, c.AdminURL, c.LoginClient = LoginSessionAPI, mustURL(t, "http://op/"), "1"
		}, "--login-client-pat-file"},
		{"zitadel valid", func(c *Config) {
			c.Login, c.AdminURL, c.LoginClient, c.LoginClientToken = LoginSessionAPI, mustURL(t, "http://op/"), "1", "t"
		}, ""},
		{"keycloak without password", func(c *Config) { c.Password = "" }, "--password-file"},
		{"form options for a form login", func(c *Config) { c.LoginForm = login.FormOptions{Consent: true, UserField: "u"} }, ""},
		{"form options for admin-accept", func(c *Config) {
			c.Login, c.AdminURL, c.LoginForm = LoginAdminAccept, mustURL(t, "http://op/"), login.FormOptions{Consent: true}
		}, "--login-consent"},
		{"no token url", func(c *Config) { c.TokenURL = nil }, "--token-url"},
		{"no username", func(c *Config) { c.Username = "" }, "--username"},
		{"relative redirect", func(c *Config) { c.RedirectURI = "/cb" }, "--redirect-uri"},
		{"pool given", func(c *Config) { c.Pool = testPool("p", "a") }, "--pool"},
		{"assertion auth", func(c *Config) { c.ClientAuth = AuthAssertion }, "--client-auth"},
		{"no client id", func(c *Config) { c.ClientID, c.ClientAuth = "", AuthNone }, "--client-id"},
		{"cc login without userinfo url", func(c *Config) {
			c.Scenario, c.UserinfoURL = schema.ScenarioClientCredentialsLogin, nil
		}, "--userinfo-url"},
		{"cc login needs a secret", func(c *Config) {
			c.Scenario, c.UserinfoURL, c.ClientAuth = schema.ScenarioClientCredentialsLogin, mustURL(t, "http://x/u"), AuthNone
		}, "--client-auth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := flowConfig(t, "http://op/auth", schema.ScenarioAuthCode)
			cfg.Login, cfg.TokenURL, cfg.RedirectURI = LoginForm, mustURL(t, "http://op/token"), fakeRedirect
			cfg.Username, cfg.Password, cfg.AdminURL = "user%d", "pw", nil
			tt.change(cfg)
			err := cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}
