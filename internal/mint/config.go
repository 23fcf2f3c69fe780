package mint

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/login"
)

// Flows mintpool knows; the logins are named by the protocol they speak
// (the products' entries say which theirs is: products/NAME).
const (
	FlowClientCredentials = "client_credentials"
	FlowPassword          = "password"
	FlowAdminAccept       = login.AdminAccept // login and consent accepted through an admin API (Hydra's)
	FlowJWTBearer         = "jwt-bearer"
	FlowClientAssertion   = "client-assertion"
	FlowSessionAPI        = login.SessionAPI // a login UI's Session API (Zitadel's v2)
	FlowForm              = login.Form       // the authorization response is the login form (Keycloak's theme)
	FlowFormPage          = login.FormPage   // a login page behind a redirect (the reference OP's)
)

// needsAuthEndpoint reports whether flow logs users in through the
// authorization endpoint: resolveEndpoints discovers it unless --auth-url
// names it.
func needsAuthEndpoint(flow string) bool {
	return flow == FlowAdminAccept || flow == FlowSessionAPI || flow == FlowForm || flow == FlowFormPage
}

// authFallback is flow's authorization endpoint below issuer when the
// discovery document names none: Hydra's and Zitadel's fixed paths, else
// "" (none: an error).
func authFallback(flow, issuer string) string {
	if p := login.AuthPath(flow); p != "" {
		return strings.TrimRight(issuer, "/") + p
	}
	return ""
}

// Token kinds a network flow can emit; jwt flows emit assertions.
const (
	EmitAccessToken  = "access_token"
	EmitRefreshToken = "refresh_token"
	EmitIDToken      = "id_token"
)

// Config is what one mintpool run needs. Secrets are already read by the
// caller (from files or the environment) and are never printed.
type Config struct {
	Flow        string // one of the Flow* constants
	TokenURL    string // token endpoint; empty = discover from Issuer
	Issuer      string // OP issuer URL for discovery
	AuthURL     string // authorization endpoint (admin-accept, form-page)
	AdminURL    string // Hydra admin base URL (admin-accept)
	RedirectURI string // registered redirect URI (admin-accept, form-page)

	ClientID     string
	ClientSecret string // secret: never logged
	ClientAuth   string // "basic" or "post"
	Scope        string // space-separated scopes sent with the grant

	Username string // password and form-login flows; "%d" is replaced by i mod Users
	Users    int    // distinct users (>= 1)
	Password string // secret: never logged
	Subject  string // admin-accept subject; "%d" as in Username

	LoginForm      login.FormOptions // form, form-page: field names where the page does not show them, extra fields, consent
	LoginClient    string            // session-api: user id of the IAM_LOGIN_CLIENT machine user
	LoginClientPAT string            // session-api: its personal access token; secret: never logged

	KeyFile  string        // Zitadel JSON key file or PEM private key (jwt flows)
	KeyID    string        // kid header; overrides the key file's keyId
	JWTIss   string        // iss claim; overrides the key file's id
	JWTSub   string        // sub claim; defaults to the iss claim
	Audience string        // aud claim (jwt flows)
	TTL      time.Duration // assertion lifetime (jwt flows)

	N           int           // credentials to mint
	Parallel    int           // concurrent workers
	Emit        string        // EmitAccessToken, EmitRefreshToken or EmitIDToken
	MaxFailures int           // abort after this many consecutive failures
	Timeout     time.Duration // per HTTP request
	Product     string        // recorded in the pool header
	Output      string        // pool file path, "-" = stdout
	Progress    bool          // draw a progress line on stderr (a TTY)
}

// DefaultScope is the scope a flow asks for when --scope is not given.
func DefaultScope(flow string) string {
	switch flow {
	case FlowPassword:
		return "openid"
	case FlowAdminAccept, FlowSessionAPI, FlowForm, FlowFormPage:
		return "openid offline_access"
	}
	return ""
}

func isJWTFlow(flow string) bool { return flow == FlowJWTBearer || flow == FlowClientAssertion }

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *Config) Validate() error {
	checks := []func() error{c.validateCommon, c.validateNetwork, c.validateFlow}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateCommon() error {
	switch {
	case c.Flow == "":
		return cli.Usagef("--flow: required (client_credentials|password|admin-accept|session-api|form|form-page|jwt-bearer|client-assertion)")
	case !slices.Contains([]string{FlowClientCredentials, FlowPassword, FlowAdminAccept, FlowSessionAPI, FlowForm, FlowFormPage, FlowJWTBearer, FlowClientAssertion}, c.Flow):
		return cli.Usagef("--flow: unknown flow %q (want client_credentials|password|admin-accept|session-api|form|form-page|jwt-bearer|client-assertion)", c.Flow)
	case c.N < 1:
		return cli.Usagef("-n/--count: must be >= 1, got %d", c.N)
	case c.Parallel < 1:
		return cli.Usagef("-P/--parallel: must be >= 1, got %d", c.Parallel)
	case c.MaxFailures < 1:
		return cli.Usagef("--max-failures: must be >= 1, got %d", c.MaxFailures)
	case c.Timeout <= 0:
		return cli.Usagef("--timeout: must be > 0, got %s", c.Timeout)
	case c.Users < 1:
		return cli.Usagef("--users: must be >= 1, got %d", c.Users)
	case !slices.Contains([]string{EmitAccessToken, EmitRefreshToken, EmitIDToken}, c.Emit):
		return cli.Usagef("--emit: want access_token|refresh_token|id_token, got %q", c.Emit)
	case !slices.Contains([]string{"basic", "post"}, c.ClientAuth):
		return cli.Usagef("--client-auth: want basic|post, got %q", c.ClientAuth)
	}
	return nil
}

// validateNetwork checks what the flows that talk to the token endpoint need.
func (c *Config) validateNetwork() error {
	if isJWTFlow(c.Flow) {
		return nil
	}
	for _, u := range []struct{ flag, val string }{
		{"--token-url", c.TokenURL}, {"--issuer", c.Issuer}, {"--auth-url", c.AuthURL},
		{"--admin-url", c.AdminURL}, {"--redirect-uri", c.RedirectURI},
	} {
		if err := checkURL(u.flag, u.val); err != nil {
			return err
		}
	}
	switch {
	case c.TokenURL == "" && c.Issuer == "":
		return cli.Usagef("--token-url or --issuer: required for flow %s", c.Flow)
	case c.ClientID == "":
		return cli.Usagef("--client-id: required for flow %s", c.Flow)
	case c.ClientSecret == "":
		return cli.Usagef("--client-secret-file (or env IDPBENCH_CLIENT_SECRET): required for flow %s", c.Flow)
	}
	return nil
}

func (c *Config) validateFlow() error {
	if !c.LoginForm.IsZero() && c.Flow != FlowForm && c.Flow != FlowFormPage {
		return cli.Usagef("--login-consent, --login-user-field, --login-password-field, --login-field: for flow form or form-page, not %s", c.Flow)
	}
	switch c.Flow {
	case FlowPassword:
		if c.Username == "" {
			return cli.Usagef("--username: required for flow password")
		}
		if c.Password == "" {
			return cli.Usagef("--password-file (or env IDPBENCH_PASSWORD): required for flow password")
		}
	case FlowAdminAccept:
		if c.AdminURL == "" {
			return cli.Usagef("--admin-url: required for flow admin-accept")
		}
		if c.AuthURL == "" && c.Issuer == "" {
			return cli.Usagef("--auth-url or --issuer: required for flow admin-accept")
		}
		if c.Subject == "" {
			return cli.Usagef("--subject: must not be empty")
		}
	case FlowSessionAPI:
		return c.validateZitadelLogin()
	case FlowForm, FlowFormPage:
		switch {
		case c.Username == "":
			return cli.Usagef("--username: required for flow %s", c.Flow)
		case c.Password == "":
			return cli.Usagef("--password-file (or env IDPBENCH_PASSWORD): required for flow %s", c.Flow)
		case c.RedirectURI == "":
			return cli.Usagef("--redirect-uri: required for flow %s", c.Flow)
		case c.AuthURL == "" && c.Issuer == "":
			return cli.Usagef("--auth-url or --issuer: required for flow %s", c.Flow)
		}
	case FlowJWTBearer, FlowClientAssertion:
		if c.KeyFile == "" {
			return cli.Usagef("--key-file: required for flow %s", c.Flow)
		}
		if c.Audience == "" {
			return cli.Usagef("--aud: required for flow %s", c.Flow)
		}
		if c.TTL <= 0 {
			return cli.Usagef("--ttl: must be > 0, got %s", c.TTL)
		}
	}
	return nil
}

func checkURL(flag, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.Usagef("%s: want an absolute http(s) URL, got %q", flag, s)
	}
	return nil
}
