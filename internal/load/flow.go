package load

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/oauthform"
	"github.com/idpbench/idpbench/internal/schema"
)

// Iteration scenarios (auth_code, client_credentials_login) model a user
// the way a k6 script does: one iteration sends several named requests in
// order, passing cookies, redirects, codes and tokens from one to the
// next, and stops at the first request that fails. They run on net/http —
// a Client per worker with its own Transport (keep-alive, one connection
// per host), redirects never followed (each hop is a named request) and a
// fresh cookie jar per iteration — since the flows are server-bound
// (password hashing, database writes) and correctness matters more than
// the driver's cost per request. The step counts iterations (see
// schema.Step.CountUnit); each name keeps its own counts and histogram.

// Request names, as Zitadel's k6 trends call them: the token and userinfo
// requests the flows send themselves, and the login hops' (internal/login
// names each protocol's).
const (
	NameToken     = "oidc_token"     // token endpoint: client_credentials or the code exchange
	NameUserinfo  = "oidc_user_info" // userinfo with the new access token
	NameAuthorize = login.NameAuthorize
	NameLoginForm = login.NameLoginForm
	NameSubmit    = login.NameSubmit
	NameCallback  = login.NameCallback
	NameAccept    = login.NameAccept
	NameVerifier  = login.NameVerifier
	NameConsent   = login.NameConsent
	NameSession   = login.NameSession
	NameFinalize  = login.NameFinalize
)

// Login drivers of the auth_code scenario (Config.Login, --login): the
// login protocols of internal/login, by their names; a product's entry
// (products/NAME) says which its S4 uses.
const (
	LoginAdminAccept = login.AdminAccept // login and consent accepted through an admin API (Ory Hydra's)
	LoginForm        = login.Form        // the authorize response is the login form (Keycloak's theme)
	LoginFormPage    = login.FormPage    // authorize -> a login page behind a redirect -> POST -> callback (the reference OP's)
	LoginSessionAPI  = login.SessionAPI  // a login UI's API: authorize -> session -> finalize (Zitadel's v2)
)

// flow is an iteration scenario.
type flow interface {
	// order is the request names in the order an iteration sends them.
	order() []string
	// run sends one iteration's requests through it, in order, and
	// returns at the first that fails.
	run(it *flowIter)
}

// flows is the engine's part for an iteration scenario.
type flows struct {
	fl       flow
	named    *namedTallies
	users    int
	next     atomic.Int64 // the next iteration's user index (mod users)
	timeout  time.Duration
	insecure bool
	headers  []Header
}

func newFlows(c *Config) *flows {
	fl := newFlow(c)
	return &flows{fl: fl, named: newNamedTallies(fl.order()), users: max(c.Users, 1),
		timeout: c.Timeout, insecure: c.Insecure, headers: c.Headers}
}

// newFlow builds the flow of a validated Config.
func newFlow(c *Config) flow {
	auth := clientAuth{method: c.ClientAuth, id: c.ClientID, secret: c.ClientSecret}
	if c.Scenario == schema.ScenarioClientCredentialsLogin {
		return &ccLoginFlow{token: c.URL, userinfo: c.UserinfoURL, auth: auth, scope: c.Scope}
	}
	ac := newAuthCode(c, auth)
	var admin string
	if c.AdminURL != nil {
		admin = c.AdminURL.String()
	}
	fl, _ := login.New(c.Login, login.Config{AuthURL: c.URL.String(), ClientID: c.ClientID, RedirectURI: c.RedirectURI,
		Scope: ac.scope, AdminURL: admin, LoginClient: c.LoginClient, LoginClientToken: c.LoginClientToken, Form: c.LoginForm}) // validated
	return &loginFlow{authCode: ac, login: fl, password: c.Password}
}

// flowWorker is one worker's HTTP client and recorder.
type flowWorker struct {
	f      *flows
	client *http.Client
}

func (f *flows) newWorker() *flowWorker {
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxConnsPerHost:     1, // requests of a worker are sequential
		MaxIdleConnsPerHost: 1,
		MaxIdleConns:        4, // a flow may call a second host (Hydra's admin API)
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: f.insecure},
	}
	return &flowWorker{f: f, client: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (w *flowWorker) close() { w.client.CloseIdleConnections() }

// run performs one iteration with a fresh cookie jar; counted says whether
// its requests belong to the measured window. The outcome has the class of
// the failing request (classOK when none failed) and the status of the
// last response (0 when the last request got none); the caller times it.
func (w *flowWorker) run(counted bool) outcome {
	// Go's jar sends Secure cookies to loopback hosts over http, as
	// browsers do: Keycloak sets its login cookies Secure even over http.
	jar, _ := cookiejar.New(nil) // never fails without options
	w.client.Jar = jar
	user := int(w.f.next.Add(1)-1) % w.f.users
	it := &flowIter{w: w, user: user, counted: counted}
	w.f.fl.run(it)
	return it.out
}

// flowIter is one iteration in progress.
type flowIter struct {
	w       *flowWorker
	user    int  // user index, 0..users-1
	counted bool // in the measured window: record its requests
	sent    int  // requests sent so far
	out     outcome
}

// reply is a response to a named request.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// judge classifies a complete response: classOK, classNon2xx or classCheck.
type judge func(r *reply) class

// do sends req as request name, with its own deadline of the timeout, and
// judges the response. It returns the reply when it passed; a failed
// request is recorded as such and ends the iteration (ok false). Requests
// in flight are never cancelled by the step's context: like single
// requests they drain, bounded by the timeout.
func (it *flowIter) do(name string, req *http.Request, j judge) (*reply, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), it.w.f.timeout)
	defer cancel()
	for _, h := range it.w.f.headers {
		req.Header.Set(h.Key, h.Value)
	}
	start := time.Now()
	r, o := it.exchange(req.WithContext(ctx), j)
	o.latency = time.Since(start)
	if o.class == classConnect {
		if it.sent == 0 {
			// Nothing of the iteration reached the server: a failed
			// connection attempt, not an iteration (the engine retries).
			it.out = o
			return nil, false
		}
		o.class = classSocket // a later hop: the iteration failed there
	}
	it.sent++
	if it.counted {
		it.w.f.named.record(name, o)
	}
	it.out.status, it.out.class = o.status, o.class
	return r, o.class == classOK
}

// exchange sends req and reads and judges the whole response.
func (it *flowIter) exchange(req *http.Request, j judge) (*reply, outcome) {
	resp, err := do(it.w.client, req)
	if err != nil {
		cl, k := transportClass(err)
		return nil, outcome{class: cl, conn: k}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		cl, _ := transportClass(err) // a read error: never a failed connect
		return nil, outcome{class: cl}
	}
	r := &reply{status: resp.StatusCode, header: resp.Header, body: body}
	return r, outcome{status: r.status, class: j(r)}
}

// username is the user name (or subject) pattern with %d replaced by the
// iteration's user index.
func (it *flowIter) username(pattern string) string {
	return strings.ReplaceAll(pattern, "%d", strconv.Itoa(it.user))
}

// newRequest builds a request from a parsed URL (it cannot fail); body ""
// is none.
func newRequest(method string, u *url.URL, body, contentType string) *http.Request {
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	req.Header.Set("User-Agent", userAgent)
	if body != "" {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// want2xx passes a 2xx response whose body passes check (nil: any body).
// Any other status counts as non2xx.
func want2xx(check func(body []byte) bool) judge {
	return func(r *reply) class {
		switch {
		case r.status < 200 || r.status > 299:
			return classNon2xx
		case check != nil && !check(r.body):
			return classCheck
		}
		return classOK
	}
}

// hasString requires a non-empty top-level string member.
func hasString(field string) func([]byte) bool {
	return func(body []byte) bool {
		raw, ok := member(body, field)
		return ok && nonEmptyString(raw)
	}
}

// jsonString returns the top-level string member field ("" when absent).
func jsonString(body []byte, field string) string {
	raw, ok := member(body, field)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// clientAuth authenticates the client at the token endpoint.
type clientAuth struct{ method, id, secret string }

// tokenRequest is a form POST to the token endpoint with the client's
// authentication (Basic credentials form-encoded first, RFC 6749 2.3.1).
func (a clientAuth) tokenRequest(u *url.URL, form url.Values) *http.Request {
	c := oauthform.Client{ID: a.id, Secret: a.secret, Auth: a.method} // AuthBasic, AuthPost, AuthNone are oauthform's
	req := newRequest(http.MethodPost, u, c.Form(form).Encode(), "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if h := c.BasicHeader(); h != "" {
		req.Header.Set("Authorization", h)
	}
	return req
}

// namedTally is the window's requests of one name.
type namedTally struct {
	counts
	hist *hdrhistogram.Histogram
}

// namedTallies collects the requests of every name. Iterations are
// server-bound (a few per millisecond at most), so one lock per request
// costs nothing that matters.
type namedTallies struct {
	mu    sync.Mutex
	order []string
	by    map[string]*namedTally
}

func newNamedTallies(order []string) *namedTallies {
	n := &namedTallies{order: order, by: map[string]*namedTally{}}
	for _, name := range order {
		n.by[name] = &namedTally{counts: counts{codes: map[int]int64{}}, hist: schema.NewHistogram()}
	}
	return n
}

func (n *namedTallies) record(name string, o outcome) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.by[name]
	if t == nil { // a name outside order(): a flow bug, but never lose a count
		t = &namedTally{counts: counts{codes: map[int]int64{}}, hist: schema.NewHistogram()}
		n.by[name] = t
		n.order = append(n.order, name)
	}
	t.record(o)
	if o.status != 0 {
		t.hist.RecordValue(min(max(o.latency.Nanoseconds(), schema.HistLowestNS), int64(schema.HistHighestNS)))
	}
}

// fill sets the iteration fields of a step: the named requests, their
// sum, and status_codes as the sum of theirs. Call after the workers ended.
func (n *namedTallies) fill(s *schema.Step) error {
	s.CountUnit, s.RequestOrder = schema.CountIterations, n.order
	s.RequestsByName, s.StatusCodes, s.HTTPRequests = map[string]schema.NamedRequests{}, map[string]int64{}, 0
	for _, name := range n.order {
		t := n.by[name]
		h, err := schema.EncodeHistogram(t.hist)
		if err != nil {
			return err
		}
		nr := schema.NamedRequests{Requests: t.requests, OK: t.ok, Errors: t.errors,
			StatusCodes: map[string]int64{}, LatencyMS: schema.Summarize(t.hist), Histogram: h}
		for code, c := range t.codes {
			nr.StatusCodes[strconv.Itoa(code)] = c
			s.StatusCodes[strconv.Itoa(code)] += c
		}
		s.RequestsByName[name] = nr
		s.HTTPRequests += t.requests
	}
	return nil
}
