package zitadeltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// The Session API login (internal/login/sessionapi) against the written
// shapes of Zitadel's answers (testdata: authorize, create_session,
// create_callback).

// The client and instance of the written login shapes.
const (
	testLoginPAT    = "login-pat-Secret-9876543210"
	flowIssuer      = "http://localhost:8080"
	flowClientID    = "291357711189296609"
	flowRedirect    = "http://localhost:9999/cb"
	flowLoginClient = "291357502765880289"
	flowUser        = "bench-user0"
	flowPassword    = "Ib-7x-Correct-Horse"
	flowCode        = "k98NBLrdjVbwQQI-oM_rR_cYHv0k3dqpkqlQX8UXTWVnYSQL9g"
	flowSession     = "yMDi6uVPJAcphbbz0LaxC07ihWkNTe7m0Xqch8SzfM5Cz3HSIQIDZ65x1f5Qal0jxz0MEyo-_zYcUg"
)

// hopRecords are the written shapes of the hops.
var hopRecords = [sessionapi.Hops]string{sessionapi.Authorize: "authorize", sessionapi.CreateSession: "create_session", sessionapi.CreateCallback: "create_callback"}

func testLoginFlow(t *testing.T, api string) *sessionapi.Flow {
	t.Helper()
	f, err := sessionapi.NewFlow(sessionapi.FlowConfig{AuthURL: flowIssuer + sessionapi.AuthorizePath, APIURL: api, ClientID: flowClientID,
		RedirectURI: flowRedirect, Scope: "openid offline_access", LoginClient: flowLoginClient, Token: testLoginPAT})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// script answers each hop with its written shape, unless answer overrides
// it ({{STATE}} in an answer is the login's state), and holds each request
// to its written shape: method, path, query, the checked headers
// (x-zitadel-login-client, the token, no token on authorize) and the body.
type script struct {
	t      *testing.T
	answer map[sessionapi.Hop]*loginhop.Response
	sent   []sessionapi.Hop
	vars   map[string]string
	bodies []string // the requests' bodies, as sent
	noDiff bool     // the requests are not the written ones
}

func newScript(t *testing.T, answer map[sessionapi.Hop]*loginhop.Response) *script {
	return &script{t: t, answer: answer, vars: map[string]string{"LOGIN_CLIENT": flowLoginClient, "LOGIN_PAT": testLoginPAT}}
}

func (s *script) do(hop sessionapi.Hop, req *http.Request, check loginhop.Check) error {
	s.sent = append(s.sent, hop)
	rec := MustLoad(s.t, hopRecords[hop])
	if hop == sessionapi.Authorize {
		s.vars["STATE"] = req.URL.Query().Get("state")
	}
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		s.bodies = append(s.bodies, string(b))
		req.Body = io.NopCloser(bytes.NewReader(b))
	} else {
		req.Body = http.NoBody // as a server sees it (Diff reads it)
	}
	if diffs := rec.Diff(req, s.vars); len(diffs) > 0 && !s.noDiff {
		s.t.Errorf("%s: request differs from its written shape:\n  %s", hop, strings.Join(diffs, "\n  "))
	}
	if hop != sessionapi.Authorize && req.Header.Get("Accept") != "application/json" {
		s.t.Errorf("%s: Accept %q", hop, req.Header.Get("Accept"))
	}
	if req.URL.Scheme+"://"+req.URL.Host != flowIssuer {
		s.t.Errorf("%s: sent to %s", hop, req.URL)
	}
	r := s.answer[hop]
	if r == nil {
		r = &loginhop.Response{Status: rec.Response.Status, Header: http.Header{}, Body: rec.Response.Body}
		for k, v := range rec.Response.Headers {
			r.Header.Set(k, v)
		}
	}
	c := *r
	c.Header = http.Header{}
	for k, v := range r.Header {
		c.Header.Set(k, Expand(v[0], s.vars))
	}
	c.Body = []byte(Expand(string(r.Body), s.vars))
	return check(&c)
}

// TestLogin: the hops in their order, each request as written, and the
// callback URL from the written answers.
func TestLogin(t *testing.T) {
	// The API URL with or without a trailing slash: the same paths.
	for _, api := range []string{flowIssuer, flowIssuer + "/"} {
		s := newScript(t, nil)
		cb, err := testLoginFlow(t, api).Login(s.do, flowUser, flowPassword)
		if err != nil {
			t.Fatalf("API URL %s: %v", api, err)
		}
		if !slices.Equal(s.sent, []sessionapi.Hop{sessionapi.Authorize, sessionapi.CreateSession, sessionapi.CreateCallback}) || len(s.sent) != sessionapi.Hops {
			t.Errorf("hops sent %v", s.sent)
		}
		if q := cb.Query(); logsafeURL(cb) != flowRedirect || q.Get("code") != flowCode || q.Get("state") != s.vars["STATE"] || len(s.vars["STATE"]) < 8 {
			t.Errorf("callback %s, state %q", cb, s.vars["STATE"])
		}
	}
}

func logsafeURL(u *url.URL) string { return u.Scheme + "://" + u.Host + u.Path }

func answer(status int, location, body string) *loginhop.Response {
	r := &loginhop.Response{Status: status, Header: http.Header{}, Body: []byte(body)}
	if location != "" {
		r.Header.Set("Location", location)
	}
	return r
}

func callbackAnswer(cb string) *loginhop.Response {
	b, _ := json.Marshal(map[string]string{"callbackUrl": cb})
	return answer(200, "", string(b))
}

// TestLoginFailures: each way a hop can fail ends the login there with a
// *loginhop.Error that says which hop, whether the status was wrong
// (loadstep: non2xx outside 2xx, else a failed check) and, in words
// mintpool prints, what was wrong and what Zitadel said, never naming the
// token, the password, the session token, the state or the code.
func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name        string
		hop         sessionapi.Hop
		answer      *loginhop.Response
		wrongStatus bool
		want        string // in Error()
	}{
		{"authorize answers a page", sessionapi.Authorize, answer(200, "", "<html>login</html>"), true,
			"Authorize (GET http://localhost:8080/oauth/v2/authorize) (want a redirect): HTTP 200: <html>login</html>"},
		{"authorize refuses the client", sessionapi.Authorize, answer(400, "", `{"error":"invalid_client","error_description":"client not found"}`), true,
			"(want a redirect): HTTP 400: client not found (code invalid_client)"},
		{"authorize answers Zitadel's error", sessionapi.Authorize, answer(400, "", `{"code":3,"message":"invalid_request: The requested redirect_uri is missing"}`), true,
			"HTTP 400: invalid_request: The requested redirect_uri is missing (code 3)"},
		{"redirect without Location", sessionapi.Authorize, answer(302, "", ""), false, "Authorize (GET http://localhost:8080/oauth/v2/authorize): HTTP 302 without a usable Location"},
		{"Location that does not parse", sessionapi.Authorize, answer(302, "http://[::1", ""), false, "HTTP 302 without a usable Location"},
		{"error redirect", sessionapi.Authorize, answer(302, flowRedirect+"?error=invalid_scope&error_description=bad+scope&state={{STATE}}", ""), false,
			"HTTP 302 redirect to http://localhost:9999/cb: invalid_scope: bad scope"},
		{"v1 login: the header not honoured", sessionapi.Authorize, answer(302, "/ui/login/login?authRequestID=123", ""), false,
			"HTTP 302 redirect to the v1 login (http://localhost:8080/ui/login/login): the x-zitadel-login-client header was not honoured"},
		{"no auth request", sessionapi.Authorize, answer(302, "/ui/v2/login/login", ""), false,
			"HTTP 302 redirect to http://localhost:8080/ui/v2/login/login has no authRequest"},
		{"wrong password", sessionapi.CreateSession, answer(400, "", `{"code":3,"message":"Errors.User.Password.Invalid (COMMAND-3M0fs)"}`), true,
			"CreateSession (POST /v2/sessions) for user bench-user0: HTTP 400: Errors.User.Password.Invalid (COMMAND-3M0fs) (code 3)"},
		{"token refused, and echoed", sessionapi.CreateSession, answer(401, "", `{"code":16,"message":"token `+testLoginPAT+` is invalid"}`), true,
			"HTTP 401: token [redacted] is invalid (code 16)"},
		{"session answer without a body", sessionapi.CreateSession, answer(502, "", ""), true, "CreateSession (POST /v2/sessions) for user bench-user0: HTTP 502"},
		{"session without token", sessionapi.CreateSession, answer(201, "", `{"sessionId":"s1"}`), false,
			"CreateSession (POST /v2/sessions) for user bench-user0: HTTP 201: answer lacks sessionId or sessionToken"},
		{"session answer not JSON", sessionapi.CreateSession, answer(200, "", `<html>`), false, "answer lacks sessionId or sessionToken"},
		{"session answers a redirect", sessionapi.CreateSession, answer(302, "/elsewhere", ""), true, "CreateSession (POST /v2/sessions) for user bench-user0: HTTP 302"},
		{"another login client", sessionapi.CreateCallback, answer(403, "", `{"code":7,"message":"Errors.AuthRequest.WrongLoginClient (COMMAND-rai9Y)"}`), true,
			"CreateCallback (POST /v2/oidc/auth_requests/V2_291358011262623969): HTTP 403: Errors.AuthRequest.WrongLoginClient (COMMAND-rai9Y) (code 7)"},
		{"callback answer without callbackUrl", sessionapi.CreateCallback, answer(200, "", `{"details":{}}`), false, "HTTP 200 without callbackUrl"},
		{"callbackUrl that does not parse", sessionapi.CreateCallback, callbackAnswer("http://[::1?code=" + flowCode), false, "HTTP 200: callbackUrl does not parse"},
		{"callback elsewhere", sessionapi.CreateCallback, callbackAnswer("http://localhost:9999/other?code=c0de&state={{STATE}}"), false,
			"callback goes to http://localhost:9999/other, not the redirect URI http://localhost:9999/cb"},
		{"callback with an error", sessionapi.CreateCallback, callbackAnswer(flowRedirect + "?error=access_denied&state={{STATE}}"), false,
			"callback http://localhost:9999/cb: access_denied"},
		{"callback with another state", sessionapi.CreateCallback, callbackAnswer(flowRedirect + "?code=c0de&state=other"), false,
			"callback http://localhost:9999/cb: state does not match the request"},
		{"callback without code", sessionapi.CreateCallback, callbackAnswer(flowRedirect + "?state={{STATE}}"), false,
			"callback http://localhost:9999/cb has no code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, map[sessionapi.Hop]*loginhop.Response{tt.hop: tt.answer})
			cb, err := testLoginFlow(t, flowIssuer).Login(s.do, flowUser, flowPassword)
			var e *loginhop.Error
			if !errors.As(err, &e) {
				t.Fatalf("callback %v, error %v (%T), want a *loginhop.Error", cb, err, err)
			}
			if e.Hop != tt.hop.String() || e.WrongStatus != tt.wrongStatus || e.Status != tt.answer.Status {
				t.Errorf("hop %s wrong status %v status %d; want %s %v %d", e.Hop, e.WrongStatus, e.Status,
					tt.hop, tt.wrongStatus, tt.answer.Status)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
			for _, leak := range []string{testLoginPAT, flowPassword, flowSession, s.vars["STATE"], flowCode, "c0de", "code=", "state=", "authRequest="} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q names %q", err, leak)
				}
			}
			if last := s.sent[len(s.sent)-1]; last != tt.hop {
				t.Errorf("hops sent %v: the login went on after %s", s.sent, tt.hop)
			}
		})
	}
}

// TestLoginRecordedErrors answers each API hop with each written error
// body: a wrong status whose message is Zitadel's, without the token.
func TestLoginRecordedErrors(t *testing.T) {
	for _, ec := range Errors(t) {
		var want struct {
			Message string `json:"message"`
		}
		json.Unmarshal(ec.Body, &want)
		for _, hop := range []sessionapi.Hop{sessionapi.CreateSession, sessionapi.CreateCallback} {
			s := newScript(t, map[sessionapi.Hop]*loginhop.Response{hop: answer(ec.Status, "", string(ec.Body))})
			_, err := testLoginFlow(t, flowIssuer).Login(s.do, flowUser, flowPassword)
			e := loginhop.WrongStatus(err)
			if e == nil || e.Hop != hop.String() || e.Status != ec.Status || want.Message == "" ||
				!strings.Contains(err.Error(), ": "+want.Message) || strings.Contains(err.Error(), testLoginPAT) {
				t.Errorf("%s, HTTP %d: error %v", hop, ec.Status, err)
			}
		}
	}
}

// TestLoginTransportError: what Do returns ends the login unchanged.
func TestLoginTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	var sent int
	_, err := testLoginFlow(t, flowIssuer).Login(func(sessionapi.Hop, *http.Request, loginhop.Check) error { sent++; return boom }, flowUser, flowPassword)
	if err != boom || sent != 1 {
		t.Errorf("error %v after %d requests, want %v after 1", err, sent, boom)
	}
}

// TestLoginRequestBodies: the bodies are the login's own JSON, whatever
// the user's name and password hold.
func TestLoginRequestBodies(t *testing.T) {
	s := newScript(t, nil)
	s.noDiff = true
	if _, err := testLoginFlow(t, flowIssuer).Login(s.do, `a"b@example.com`, `p\w"d`); err != nil {
		t.Fatal(err)
	}
	if len(s.bodies) != 2 || s.bodies[0] != `{"checks":{"user":{"loginName":"a\"b@example.com"},"password":{"password":"p\\w\"d"}}}` ||
		s.bodies[1] != `{"session":{"sessionId":"291358002806603233","sessionToken":"`+flowSession+`"}}` {
		t.Errorf("bodies %q", s.bodies)
	}
}
