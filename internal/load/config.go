package load

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/oauthform"
	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
)

// Pool modes (schema.PoolModes).
const (
	PoolReuse   = schema.PoolReuse
	PoolConsume = schema.PoolConsume
	PoolChain   = schema.PoolChain
)

// Client authentication methods.
const (
	AuthBasic     = oauthform.Basic // client_secret_basic
	AuthPost      = oauthform.Post  // client_secret_post
	AuthNone      = oauthform.None  // client_id in the form only
	AuthAssertion = "assertion"     // private_key_jwt / client_secret_jwt from an assertion pool
)

// Placeholder is replaced by a pool credential in a custom request's body and headers.
const Placeholder = "{{pool}}"

// WindowObserver is told of the measured window's edges as the engine
// decides them. WindowStart is called on the engine's watcher once the
// window has begun (after an adaptive warmup has decided when): it must
// return at once and do its work elsewhere. StepDrained is called once
// every worker has stopped and every request of the window has
// completed, before the step is built, and may block (it should be
// bounded). StepDrained is called even when WindowStart was not (a step
// interrupted in its warmup).
type WindowObserver interface {
	WindowStart(at time.Time)
	StepDrained(ctx context.Context)
}

// Header is one custom request header.
type Header struct{ Key, Value string }

// Config is one load step.
type Config struct {
	URL         *url.URL      // full endpoint URL
	Scenario    string        // schema.Scenario* name
	Connections int           // concurrent connections, each its own request loop; with a Segment, the whole step's (see Segment)
	Warmup      time.Duration // before the window; with WarmupMax, its floor
	Duration    time.Duration // measured window
	Interval    time.Duration // per-interval histogram length
	Timeout     time.Duration // whole request, including the body read
	// Rate is the open-loop rate in requests/s over all connections (the
	// wrk2 model, see paced); with a Segment, of the whole step over all
	// agents (this agent sends its slots of the one schedule, Rate/Of).
	// 0 = closed loop.
	Rate float64
	// Segment makes the step one agent's share of a step several run
	// together (see Segment); the zero value is the whole step.
	Segment Segment
	// StartAt, when not zero, is when the warmup begins (see launchTime):
	// after its setup Run waits for it, and refuses to start more than
	// one Interval after it. Zero = as soon as set up.
	StartAt time.Time

	// WarmupMax > 0 makes the warmup adaptive (see settle): at least
	// Warmup, then until the throughput is stable (in rate mode: until the
	// corrected latency no longer falls), at most WarmupMax. 0 = a fixed
	// warmup of Warmup.
	WarmupMax       time.Duration
	WarmupStable    int     // adaptive: the consecutive intervals that must be stable, 2..60
	WarmupTolerance float64 // adaptive: each of them within ± this percent of their mean (rate mode: each within this percent, or 0.2 ms, above the calmest: calmRun), in (0, 100)
	// RampUp, in rate mode, makes the schedule climb linearly from 0 to
	// Rate over this first part of the warmup (see plan.intended); at most
	// Warmup. 0 = the whole rate from the start.
	RampUp time.Duration
	// JITPidfile names the product's process group (its leader's pid on
	// the first line): loadstep follows the JIT compilers of the JVM in it
	// (jit.go) and records how busy they were; "" = not watched.
	JITPidfile string
	// WarmupJITMax > 0 (adaptive, with JITPidfile): the stable intervals
	// must also have had the JIT compiling at most this percent of one
	// core; no JIT found, no condition.
	WarmupJITMax float64

	// Window, when not nil, is told when the measured window has begun
	// and when the step has drained (loadstep --server-metrics scrapes
	// the product's metrics there).
	Window WindowObserver
	// Live, when not nil, is shown the running figures at every interval
	// tick (loadstep --metrics-addr serves them); see LiveObserver.
	Live LiveObserver

	Pool          *pool.Pool // credentials; nil when the scenario needs none
	PoolMode      string     // PoolReuse | PoolConsume | PoolChain
	AssertionPool *pool.Pool // client assertions for AuthAssertion

	ClientID     string
	ClientSecret string // never logged, never in the result
	ClientAuth   string // Auth*; "" = the scenario's default
	Scope        string // token scenarios; "" = none sent

	Method  string   // request scenario
	Headers []Header // request scenario (also added to every scenario)
	Body    string   // request scenario; may contain Placeholder
	Expect  string   // request scenario: the body must contain this

	// Iteration scenarios (see flow.go). auth_code: URL is the
	// authorization endpoint; client_credentials_login: URL is the token
	// endpoint.
	Login            string   // auth_code: LoginAdminAccept | LoginForm | LoginFormPage | LoginSessionAPI
	TokenURL         *url.URL // auth_code: the token endpoint of the code exchange
	AdminURL         *url.URL // auth_code: Hydra's admin API base URL; Zitadel's API base URL
	RedirectURI      string   // auth_code: the client's registered redirect URI
	Username         string   // auth_code: user name (Hydra: subject); %d = the user index
	Users            int      // auth_code: user indexes 0..Users-1, round robin over iterations
	Password         string   // auth_code form logins; never logged, never in the result
	LoginClient      string   // LoginSessionAPI: the login client's user id (a machine user with IAM_LOGIN_CLIENT)
	LoginClientToken string   // LoginSessionAPI: its token; never logged, never in the result
	// LoginForm: LoginForm, LoginFormPage: the form's field names where the
	// page does not show them, fields sent beside them, consent answered.
	LoginForm   login.FormOptions
	UserinfoURL *url.URL // client_credentials_login: the userinfo endpoint

	// IntrospectCheck is what an introspection response must be:
	// CheckActive ("" too) or CheckAnswered.
	IntrospectCheck string

	Product        string
	ProductVersion string
	Labels         map[string]string

	Engine    string        // "" (default: EngineEpoll where it applies, else EngineRaw) | EngineEpoll | EngineRaw | EngineNetHTTP; https always uses EngineNetHTTP
	Insecure  bool          // skip TLS certificate verification (https)
	NewSender NewSenderFunc // overrides Engine (tests, other engines)
	Progress  io.Writer     // where to draw a progress line; nil = none
}

// poolScenario reports whether a scenario needs a credential per request.
func poolScenario(scenario string) bool {
	switch scenario {
	case schema.ScenarioIntrospect, schema.ScenarioRefresh, schema.ScenarioUserinfo, schema.ScenarioJWTBearer:
		return true
	}
	return false
}

// clientAuthDefault is the client authentication of each scenario that sends one.
func clientAuthDefault(scenario string) string {
	switch scenario {
	case schema.ScenarioClientCredentials, schema.ScenarioIntrospect, schema.ScenarioRefresh,
		schema.ScenarioClientCredentialsLogin, schema.ScenarioAuthCode:
		return AuthBasic
	case schema.ScenarioJWTBearer:
		return AuthNone
	}
	return ""
}

// needsPool reports whether the step draws credentials from c.Pool.
func (c *Config) needsPool() bool {
	if c.Scenario == schema.ScenarioRequest {
		if strings.Contains(c.Body, Placeholder) {
			return true
		}
		for _, h := range c.Headers {
			if strings.Contains(h.Value, Placeholder) {
				return true
			}
		}
		return false
	}
	return poolScenario(c.Scenario)
}

// Validate checks what the flags alone cannot: the scenario's needs; it
// fills in the scenario's default ClientAuth. Every
// error is a cli.UsageError naming the flag or file.
func (c *Config) Validate() error {
	if _, ok := schema.LookupScenario(c.Scenario); !ok {
		return cli.Usagef("--scenario: unknown scenario %q (want discovery, client_credentials, "+
			"client_credentials_login, introspect, auth_code, refresh, userinfo, jwt_bearer or request)", c.Scenario)
	}
	if c.ClientAuth == "" {
		c.ClientAuth = clientAuthDefault(c.Scenario)
	}
	for _, check := range []func() error{c.validateRate, c.validateWarmup, c.validateSegment, c.validateStartAt,
		c.validateEngine, c.validateHeaders, c.validatePool,
		c.validateAuth, c.validateFlow} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateRate() error {
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		return cli.Usagef("--rate: must be a finite number of requests/s, 0 or more, got %v", c.Rate)
	}
	return nil
}

// validateWarmup checks the adaptive warmup's rule.
func (c *Config) validateWarmup() error {
	switch {
	case c.WarmupJITMax < 0 || math.IsNaN(c.WarmupJITMax) || math.IsInf(c.WarmupJITMax, 0):
		return cli.Usagef("--warmup-jit-max: want a finite percent of one core, 0 or more, got %v", c.WarmupJITMax)
	case c.WarmupJITMax > 0 && (c.WarmupMax == 0 || c.JITPidfile == ""):
		return cli.Usagef("--warmup-jit-max: needs an adaptive warmup (--warmup-max) and the JVM to watch (--jit-pidfile)")
	case c.RampUp < 0 || c.RampUp > 0 && c.Rate == 0:
		return cli.Usagef("--ramp: a duration of 0 or more, in rate mode (--rate) only; got %s", c.RampUp)
	case c.RampUp > c.Warmup:
		return cli.Usagef("--ramp: the ramp %s is longer than the warmup --warmup %s (the window runs at the whole rate)", c.RampUp, c.Warmup)
	case c.WarmupMax < 0:
		return cli.Usagef("--warmup-max: must not be negative, got %s", c.WarmupMax)
	case c.WarmupMax == 0:
		return nil
	case c.WarmupMax < c.Warmup:
		return cli.Usagef("--warmup-max: the cap %s is below the floor --warmup %s", c.WarmupMax, c.Warmup)
	case c.WarmupStable < 2 || c.WarmupStable > 60:
		return cli.Usagef("--warmup-stable: want 2 to 60 intervals, got %d", c.WarmupStable)
	case !(c.WarmupTolerance > 0 && c.WarmupTolerance < 100):
		return cli.Usagef("--warmup-tolerance: want a percentage above 0 and below 100, got %v", c.WarmupTolerance)
	}
	return nil
}

func (c *Config) validateEngine() error {
	switch c.Engine {
	case "", EngineRaw, EngineNetHTTP:
		return nil
	case EngineEpoll:
		if !epollAvailable {
			return cli.Usagef("--engine: epoll is Linux only (want raw or nethttp here)")
		}
		return nil
	}
	return cli.Usagef("--engine: unknown engine %q (want raw, epoll or nethttp)", c.Engine)
}

// validateHeaders rejects what would break the request head.
func (c *Config) validateHeaders() error {
	for _, h := range c.Headers {
		if h.Key == "" || strings.ContainsAny(h.Key, ": \t") || !validHeaderValue(h.Key) || !validHeaderValue(h.Value) {
			return cli.Usagef("--header: %q is not a valid header", h.Key+": "+h.Value)
		}
		if strings.Contains(h.Key, Placeholder) {
			return cli.Usagef("--header: %s may stand in a header value only", Placeholder)
		}
	}
	return nil
}

// sender is the Sender factory the step uses and the engine's name. The
// raw and epoll engines speak plain HTTP only: an https target uses
// net/http. The epoll engine, the default, has no Sender (nil,
// EngineEpoll); where it does not apply (rate mode, another OS) the step
// uses raw, as https uses net/http. Iteration scenarios never ask.
func (c *Config) sender() (NewSenderFunc, string) {
	switch {
	case c.NewSender != nil:
		return c.NewSender, c.Engine
	case c.Engine == EngineNetHTTP || c.URL.Scheme == "https":
		return NewHTTPSender(c.Insecure), EngineNetHTTP
	case (c.Engine == "" || c.Engine == EngineEpoll) && epollAvailable && c.Rate == 0:
		return nil, EngineEpoll
	}
	return NewRawSender(c.Timeout), EngineRaw
}

func (c *Config) validatePool() error {
	if !c.needsPool() {
		if c.Pool != nil {
			return cli.Usagef("--pool: scenario %s takes no pool", c.Scenario)
		}
		return nil
	}
	if c.Pool == nil {
		return cli.Usagef("--pool: scenario %s needs a pool of credentials", c.Scenario)
	}
	if err := c.validateHeaderCreds(); err != nil {
		return err
	}
	switch c.PoolMode {
	case PoolReuse:
	case PoolConsume, PoolChain:
		if c.PoolMode == PoolChain && c.Scenario != schema.ScenarioRefresh {
			return cli.Usagef("--pool-mode: chain applies to the refresh scenario only")
		}
		if n, conns := len(c.Segment.Pool(c.Pool).Creds), c.agentConnections(); n < conns {
			return cli.Usagef("--pool %s: %d credentials%s for %d connections (%s mode needs at least one per connection)",
				c.Pool.Name, n, c.segmentNote(), conns, c.PoolMode)
		}
	default:
		return cli.Usagef("--pool-mode: unknown mode %q (want reuse, consume or chain)", c.PoolMode)
	}
	return validateSlice("pool", c.Pool, c.Segment)
}

// segmentNote says, in a pool error, that the figures are one segment's.
func (c *Config) segmentNote() string {
	if c.Segment.agents() == 1 {
		return ""
	}
	return fmt.Sprintf(" (segment %s's share of the pool's %d)", c.Segment, len(c.Pool.Creds))
}

// validateSlice refuses a pool too small to give the segment a credential.
func validateSlice(flag string, p *pool.Pool, s Segment) error {
	if p != nil && len(s.Pool(p).Creds) == 0 {
		return cli.Usagef("--%s %s: %d credentials leave segment %s none (need at least %d, one per agent)",
			flag, p.Name, len(p.Creds), s, s.Of)
	}
	return nil
}

// validateHeaderCreds checks, once, the credentials a scenario puts into a
// header: a CR or LF there would split the request.
func (c *Config) validateHeaderCreds() error {
	if !c.credInHeader() {
		return nil
	}
	for i, cred := range c.Pool.Creds {
		if !validHeaderValue(cred) {
			return cli.Usagef("--pool %s line %d: the credential holds a control character and cannot be sent in a header", c.Pool.Name, c.Pool.Line(i))
		}
	}
	return nil
}

func (c *Config) validateAuth() error {
	switch c.IntrospectCheck {
	case "", CheckActive:
	case CheckAnswered:
		if c.Scenario != schema.ScenarioIntrospect {
			return cli.Usagef("--introspect-check: only the introspect scenario has it")
		}
	default:
		return cli.Usagef("--introspect-check: unknown check %q (want active or answered)", c.IntrospectCheck)
	}
	if clientAuthDefault(c.Scenario) == "" {
		return nil
	}
	switch c.ClientAuth {
	case AuthBasic, AuthPost:
		if c.ClientID == "" {
			return cli.Usagef("--client-id: client auth %s needs a client id", c.ClientAuth)
		}
		if c.ClientSecret == "" {
			return cli.Usagef("--client-secret-file: client auth %s needs a secret "+
				"(--client-secret-file or IDPBENCH_CLIENT_SECRET)", c.ClientAuth)
		}
	case AuthNone:
		if c.Scenario == schema.ScenarioClientCredentials || c.Scenario == schema.ScenarioClientCredentialsLogin {
			return cli.Usagef("--client-auth: %s needs basic or post", c.Scenario)
		}
	case AuthAssertion:
		if c.Scenario == schema.ScenarioClientCredentials || schema.IterationScenario(c.Scenario) {
			return cli.Usagef("--client-auth: %s needs basic or post", c.Scenario)
		}
		if c.AssertionPool == nil {
			return cli.Usagef("--client-assertion-pool: client auth assertion needs a pool of client assertions")
		}
		return validateSlice("client-assertion-pool", c.AssertionPool, c.Segment)
	default:
		return cli.Usagef("--client-auth: unknown method %q (want basic, post, none or assertion)", c.ClientAuth)
	}
	return nil
}

// validateFlow checks what an iteration scenario needs.
func (c *Config) validateFlow() error {
	switch c.Scenario {
	case schema.ScenarioClientCredentialsLogin:
		if c.UserinfoURL == nil {
			return cli.Usagef("--userinfo-url: client_credentials_login needs the userinfo endpoint")
		}
	case schema.ScenarioAuthCode:
		return c.validateLogin()
	}
	return nil
}

// validateLogin checks the auth_code flags of the chosen login driver.
func (c *Config) validateLogin() error {
	switch c.Login {
	case LoginAdminAccept:
		if c.AdminURL == nil {
			return cli.Usagef("--admin-url: --login admin-accept accepts login and consent through the admin API")
		}
	case LoginForm, LoginFormPage, LoginSessionAPI:
		if c.Password == "" {
			return cli.Usagef("--password-file: --login %s submits a password (--password-file or IDPBENCH_PASSWORD)", c.Login)
		}
	default:
		return cli.Usagef("--login: unknown login driver %q (want admin-accept, form, form-page or session-api)", c.Login)
	}
	if !c.LoginForm.IsZero() && c.Login != LoginForm && c.Login != LoginFormPage {
		return cli.Usagef("--login-consent, --login-user-field, --login-password-field, --login-field: for --login form or form-page, not %s", c.Login)
	}
	if c.Login == LoginSessionAPI {
		switch {
		case c.AdminURL == nil:
			return cli.Usagef("--admin-url: --login session-api calls the Session API at Zitadel's base URL")
		case c.LoginClient == "":
			return cli.Usagef("--login-client: --login session-api needs the login client's user id")
		case c.LoginClientToken == "":
			return cli.Usagef("--login-client-pat-file: --login session-api needs the login client's token (--login-client-pat-file or IDPBENCH_LOGIN_CLIENT_PAT)")
		}
	}
	switch {
	case c.TokenURL == nil:
		return cli.Usagef("--token-url: auth_code exchanges the code at the token endpoint")
	case c.Username == "":
		return cli.Usagef("--username: auth_code logs a user in (%%d = user index)")
	case c.Users < 0:
		return cli.Usagef("--users: must not be negative, got %d", c.Users)
	case c.ClientID == "":
		return cli.Usagef("--client-id: auth_code needs the client id")
	}
	if u, err := url.Parse(c.RedirectURI); err != nil || !u.IsAbs() || u.Host == "" {
		return cli.Usagef("--redirect-uri: %q is not an absolute URL", c.RedirectURI)
	}
	return nil
}
