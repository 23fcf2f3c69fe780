package oidc

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/schema"
)

// The generic adapter's configuration file (IDPBENCH_OIDC_CONFIG) is
// KEY=value lines, read here, never sourced or evaluated by the shell: no
// quoting rules beyond one optional pair of surrounding quotes ("..." or
// '...'), no variable expansion, no inline comments; surrounding white space
// is dropped; a line starting with # is a comment; a later line overrides an
// earlier one. An empty value is the same as no line. A file value may start
// with ~/ (the home directory) or be relative to the file's directory.
// NOTE, DEVIATION, CONFIG_SOURCE, SETTING and LOGIN_FIELD repeat and keep
// their order. OIDCKeys lists the other keys, with their defaults and what
// they mean; examples/oidc/myidp.env is the template, every key in it.
//
// A file is read whole and every problem reported, each at its line
// (OIDCProblems): an unknown key, a value a key does not take, a required
// key missing, a key another needs, a URL not on loopback, a credential
// file missing or open to others. N/A scenarios follow the discovery
// document and the file (OIDCConfig.NA), the reason quoting either.

// OIDCKey is one key of the configuration file.
type OIDCKey struct {
	Name     string
	Default  string   // the value when unset; see OIDCConfig.Get for the keys that follow another
	OneOf    []string // the values allowed; nil: any
	Kind     oidcKind // what else the value must be
	Required bool     // every file sets it
	Doc      string
}

type oidcKind int

const (
	oidcText   oidcKind = iota
	oidcPath            // a file: ~/ or relative to the configuration's directory
	oidcSecret          // a credential file (a path): there, regular, no access for group or others
	oidcNumber          // a whole number
	oidcURL             // an http(s) URL on loopback: the tools send it requests
	oidcAbsURL          // an absolute http(s) URL, never fetched (a redirect URI)
	oidcName            // letters, digits, . _ : -
)

// Repeatable keys of the configuration file.
const (
	oidcNote         = "NOTE"          // a note in the fairness appendix
	oidcDeviation    = "DEVIATION"     // what | why: a departure from the IdP's documented defaults
	oidcConfigSource = "CONFIG_SOURCE" // what | url: where the IdP's configuration comes from
	oidcSetting      = "SETTING"       // key=value: an effective setting worth reporting
	oidcLoginField   = "LOGIN_FIELD"   // name=value: sent with the login form's user name and password
)

// GrantJWTBearer is RFC 7523's grant type, as discovery lists it.
const GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// OIDCKeys are the configuration file's single-valued keys, in the order
// OIDCConfig.Env prints them (and the template, examples/oidc/myidp.env,
// lists them).
var OIDCKeys = []OIDCKey{
	{Name: "NAME", Kind: oidcName, Required: true, Doc: "product name in the results and the report (A-Z a-z 0-9 . _ : -)"},
	{Name: "VERSION", Default: "unknown", Doc: "product version for the report"},
	{Name: "ISSUER", Kind: oidcURL, Required: true, Doc: "the issuer, an http(s) URL on loopback (127.0.0.0/8, [::1] or localhost), like every target here"},
	{Name: "DISCOVERY_URL", Kind: oidcURL, Doc: "the discovery document (default ISSUER/.well-known/openid-configuration)"},
	{Name: "TOKEN_ENDPOINT", Kind: oidcURL, Doc: "override of the discovered token endpoint (recorded as a deviation)"},
	{Name: "INTROSPECTION_ENDPOINT", Kind: oidcURL, Doc: "override of the discovered introspection endpoint (a deviation)"},
	{Name: "USERINFO_ENDPOINT", Kind: oidcURL, Doc: "override of the discovered userinfo endpoint (a deviation)"},
	{Name: "AUTHORIZATION_ENDPOINT", Kind: oidcURL, Doc: "override of the discovered authorization endpoint (S4; a deviation)"},
	{Name: "GRANT_TYPES", Doc: "overrides discovery's grant_types_supported (space separated; a deviation)"},
	{Name: "CLIENT_ID", Doc: "the confidential client of S2 (client_credentials), S2l and S3's client tokens"},
	{Name: "CLIENT_SECRET_FILE", Kind: oidcSecret, Doc: "file holding its secret (never the secret itself), mode 0600"},
	{Name: "CLIENT_AUTH", Default: "basic", OneOf: []string{"basic", "post"}, Doc: "how the client authenticates"},
	{Name: "CLIENT_SCOPE", Doc: "scope sent with client_credentials requests (default none)"},
	{Name: "CLIENT_USERINFO", Default: "no", OneOf: []string{"yes", "no"}, Doc: "yes: userinfo answers the client's own " +
		"client_credentials token with a sub, so S2l (client_credentials_login) runs; OpenID Connect's userinfo is for an end user's " +
		"token, and many IdPs refuse a client's (setup checks it once)"},
	{Name: "CLIENT_USERINFO_SCOPE", Doc: "the scope S2l's client_credentials token is asked with (default CLIENT_SCOPE; Keycloak answers userinfo only for openid)"},
	{Name: "USER_TOKENS", Default: "none", OneOf: []string{"password", "login", "command", "none"},
		Doc: "how user tokens (S3 with INTROSPECT_TOKENS=user, S5 refresh, S6 userinfo) are obtained: the password grant, " +
			"the LOGIN protocol (mintpool), TOKEN_COMMAND, or none"},
	{Name: "USER_CLIENT_ID", Doc: "the client user tokens are issued to, which also refreshes them in S5 and logs users in in S4 (default CLIENT_ID)"},
	{Name: "USER_CLIENT_SECRET_FILE", Kind: oidcSecret, Doc: "its secret's file, mode 0600 (default CLIENT_SECRET_FILE)"},
	{Name: "USER_CLIENT_AUTH", OneOf: []string{"basic", "post"}, Doc: "how it authenticates (default CLIENT_AUTH)"},
	{Name: "USERNAME", Default: "user%d", Doc: `the user name of the password grant and the login (admin-accept: the subject); "%d" runs over USERS users sharing one password`},
	{Name: "USERS", Default: "1", Kind: oidcNumber, Doc: "how many users"},
	{Name: "PASSWORD_FILE", Kind: oidcSecret, Doc: "the file holding their password, mode 0600"},
	{Name: "USER_SCOPE", Default: "openid", Doc: "the scope user tokens are asked with (the password grant, USER_TOKENS=login; a refresh token usually wants offline_access too)"},
	{Name: "TOKEN_COMMAND", Doc: "command (bash -c, in the file's directory) printing tokens, one a line ('#' lines ignored); " +
		"it gets IDPBENCH_POOL_COUNT (how many), IDPBENCH_POOL_EMIT (access_token | refresh_token), IDPBENCH_POOL_SCENARIO, " +
		`and the idpbench tools first on PATH, e.g. mintpool --flow admin-accept ... -n "$IDPBENCH_POOL_COUNT"`},
	{Name: "LOGIN", Default: "none", OneOf: []string{login.Form, login.FormPage, login.AdminAccept, "none"},
		Doc: "the login protocol of S4 (auth_code) and of USER_TOKENS=login: form (the authorization request answers the login " +
			"form: Keycloak), form-page (the form behind a redirect, then a callback: the reference OP, Spring Authorization Server, " +
			"node oidc-provider), admin-accept (login and consent accepted through an admin API: Ory Hydra), none (S4 N/A)"},
	{Name: "REDIRECT_URI", Kind: oidcAbsURL, Doc: "the redirect URI registered for USER_CLIENT_ID, where a login ends (never fetched)"},
	{Name: "LOGIN_SCOPE", Doc: "the scope S4's logins ask for (default USER_SCOPE)"},
	{Name: "LOGIN_ADMIN_URL", Kind: oidcURL, Doc: "LOGIN=admin-accept: the admin API's base URL (Hydra's admin port)"},
	{Name: "LOGIN_USER_FIELD", Doc: "form logins: the login form's user name field, where the page does not show it " +
		"(default: the text or email input before its password input)"},
	{Name: "LOGIN_PASSWORD_FIELD", Doc: "form logins: the login form's password field, where the page has no password input"},
	{Name: "JWT_BEARER_KEY_FILE", Kind: oidcSecret, Doc: "S2j (jwt_bearer, RFC 7523): the private key the IdP trusts, a PEM RSA key or a " +
		"Zitadel JSON key file, mode 0600; unset: S2j N/A"},
	{Name: "JWT_BEARER_KID", Doc: "its key id, the assertions' kid (required for a PEM key; a JSON key file names its own)"},
	{Name: "JWT_BEARER_ISS", Doc: "the assertions' iss (required for a PEM key; a JSON key file names its user)"},
	{Name: "JWT_BEARER_SUB", Doc: "the assertions' sub (default JWT_BEARER_ISS)"},
	{Name: "JWT_BEARER_AUD", Doc: "the assertions' aud (default ISSUER; some IdPs want the token endpoint)"},
	{Name: "JWT_BEARER_SCOPE", Doc: "scope sent with the grant (default none)"},
	{Name: "JWT_BEARER_TTL_S", Default: "3600", Kind: oidcNumber, Doc: "the assertions' lifetime, s (pools are reminted in time)"},
	{Name: "JWT_BEARER_CLIENT_AUTH", Default: "none", OneOf: []string{"none", "basic", "post"},
		Doc: "how the grant's client authenticates: none (RFC 7523's default), or CLIENT_ID's basic or post"},
	{Name: "REFRESH_POOL_MODE", Default: schema.PoolChain, OneOf: []string{schema.PoolChain, schema.PoolConsume, schema.PoolReuse},
		Doc: "S5: chain (each connection refreshes with the token its previous response returned: for IdPs that rotate " +
			"refresh tokens -- Hydra, Zitadel, the reference OP -- and fine for the others), consume (each token once), " +
			"reuse (only where tokens are reusable, e.g. Keycloak's default revokeRefreshToken=false)"},
	{Name: "INTROSPECT_TOKENS", Default: "client_credentials", OneOf: []string{"client_credentials", "user"},
		Doc: "S3 introspects: client_credentials tokens (CLIENT_*) or user tokens (USER_CLIENT_* introspects them)"},
	{Name: "INTROSPECT_AUTH", OneOf: []string{"basic", "post", "none"}, Doc: "how S3 authenticates (default: the introspecting client's)"},
	{Name: "START_COMMAND", Doc: "starts the IdP (bash -c, in the file's directory; exec the server): run under coldstart " +
		"(A at up, B at restart), stopped with its process group. Without it the IdP is assumed running: cold start N/A"},
	{Name: "STOP_COMMAND", Doc: "runs before the process group is stopped (optional)"},
	{Name: "RESET_COMMAND", Doc: "runs before the first start, e.g. to empty the IdP's database, so cold start A is a fresh start (optional)"},
	{Name: "READY_URL", Kind: oidcURL, Doc: "answers 200 when ready (default: the discovery URL)"},
	{Name: "READY_TIMEOUT_S", Default: "120", Kind: oidcNumber, Doc: "how long a start may take, s"},
	{Name: "PIDFILE", Kind: oidcPath, Doc: "sampler --pidfile of the IdP's root process when the adapter did not start it (its process tree is sampled)"},
	{Name: "MATCH", Doc: `else sampler --match REGEX for the IdP's processes (full command line, e.g. "kc\.sh start")`},
	{Name: "PG_DSN", Doc: "sampler --postgres DSN of the IdP's database, without a password (use ~/.pgpass or PGPASSFILE)"},
	{Name: "ACCESS_TOKEN_TTL_S", Kind: oidcNumber, Doc: "access token lifetime, s (pools are reminted in time)"},
	{Name: "REFRESH_TOKEN_TTL_S", Kind: oidcNumber, Doc: "refresh token lifetime, s"},
	{Name: "METRICS_URL", Kind: oidcURL, Doc: "the IdP's Prometheus text exposition (optional): loadstep scrapes it at each window's edges " +
		"(--server-metrics); without it, and for a scenario without a METRICS_SELECT_*, the report's server side is N/A"},
	{Name: "METRICS_SELECT_DISCOVERY", Doc: `the scenario's series, family{label="value",...} (exact matches; a histogram, ` +
		`summary or counter family), e.g. http_server_requests_seconds{method="POST",uri="/realms/{realm}/protocol/{protocol}/token"}`},
	{Name: "METRICS_SELECT_CLIENT_CREDENTIALS", Doc: "the same for S2"},
	{Name: "METRICS_SELECT_INTROSPECT", Doc: "the same for S3"},
	{Name: "METRICS_SELECT_REFRESH", Doc: "the same for S5"},
	{Name: "METRICS_SELECT_USERINFO", Doc: "the same for S6"},
	{Name: "METRICS_STATUS_LABEL", Default: "status", Doc: "the label of those series that holds the HTTP status"},
}

// OIDCConfig is a configuration file, read and checked.
type OIDCConfig struct {
	File string // the file as named; problems name it so
	Abs  string // its absolute path
	Dir  string // its absolute directory, where relative paths and the commands start
	Home string // what a leading ~/ stands for
	// The repeatable keys, in file order: NOTE; DEVIATION ("what | why");
	// CONFIG_SOURCE ("what | url"); SETTING (key=value).
	Notes, Deviations, Sources, Settings []string
	// LoginFields are the LOGIN_FIELD lines, name and value.
	LoginFields [][2]string
	values      map[string]string
	lines       map[string]int // the line each key was last set on
}

// OIDCProblem is one thing wrong with a configuration file.
type OIDCProblem struct {
	Line int // its line; 0: the file as a whole (a required key it lacks)
	Msg  string
	// Runtime: the IdP's answer, not the file (its discovery document not
	// reachable); a file with only these is no usage error.
	Runtime bool
}

// OIDCProblems is every problem of a file, in line order.
type OIDCProblems struct {
	File string
	List []OIDCProblem
}

// Lines are the problems, one a line: "FILE:LINE: what" (or "FILE: what").
func (p *OIDCProblems) Lines() []string {
	out := make([]string, len(p.List))
	for i, q := range p.List {
		if q.Line > 0 {
			out[i] = fmt.Sprintf("%s:%d: %s", p.File, q.Line, q.Msg)
		} else {
			out[i] = p.File + ": " + q.Msg
		}
	}
	return out
}

// Error is every problem, one a line.
func (p *OIDCProblems) Error() string { return strings.Join(p.Lines(), "\n") }

// Runtime reports whether every problem is the IdP's, none the file's.
func (p *OIDCProblems) Runtime() bool {
	for _, q := range p.List {
		if !q.Runtime {
			return false
		}
	}
	return true
}

// add records a problem; sort orders them by line once all are in.
func (p *OIDCProblems) add(line int, format string, a ...any) {
	p.List = append(p.List, OIDCProblem{Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (p *OIDCProblems) sort() {
	sort.SliceStable(p.List, func(i, j int) bool { return p.List[i].Line < p.List[j].Line })
}

// err is p as an error, nil when it holds none.
func (p *OIDCProblems) err() error {
	if len(p.List) == 0 {
		return nil
	}
	return p
}

// ReadOIDCConfig reads and checks the configuration file name: an error
// when it cannot be read, an *OIDCProblems with every problem it has.
func ReadOIDCConfig(name, home string) (*OIDCConfig, error) {
	c, probs, err := LoadOIDCConfig(name, home)
	if err != nil {
		return nil, err
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadOIDCConfig reads the configuration file name and returns it with its
// problems (none: an empty list); the error is for a file it cannot read.
func LoadOIDCConfig(name, home string) (*OIDCConfig, *OIDCProblems, error) {
	f, err := os.Open(name)
	if err == nil {
		defer f.Close()
		var st os.FileInfo
		if st, err = f.Stat(); err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("no readable configuration file %s (IDPBENCH_OIDC_CONFIG)", name)
	}
	return loadOIDC(f, name, home)
}

// ParseOIDCConfig reads a configuration from r, file naming it in problems
// and its directory where relative paths start; an *OIDCProblems error
// holds every problem.
func ParseOIDCConfig(r io.Reader, file, home string) (*OIDCConfig, error) {
	c, probs, err := loadOIDC(r, file, home)
	if err != nil {
		return nil, err
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	return c, nil
}

var (
	oidcLine  = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	oidcNameV = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)
	oidcCount = regexp.MustCompile(`^[0-9]+$`)
	// A password in a URL DSN (user:password@) or a keyword DSN (password=).
	oidcPGPass = regexp.MustCompile(`://[^/@]*:[^/@]*@|(^|\s)password\s*=`)
	oidcLoop   = regexp.MustCompile(`^(https?)://(127\.0\.0\.1|localhost|\[::1\])(:([0-9]+))?(/|$)`)
)

func loadOIDC(r io.Reader, file, home string) (*OIDCConfig, *OIDCProblems, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, err
	}
	c := &OIDCConfig{File: file, Abs: abs, Dir: filepath.Dir(abs), Home: home, values: map[string]string{}, lines: map[string]int{}}
	probs := &OIDCProblems{File: file}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := c.line(n, strings.TrimSpace(sc.Text())); err != nil {
			probs.add(n, "%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", file, err)
	}
	c.check(probs)
	probs.sort()
	return c, probs, nil
}

// line takes line n, white space trimmed.
func (c *OIDCConfig) line(n int, line string) error {
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	m := oidcLine.FindStringSubmatch(line)
	if m == nil {
		return errors.New("not a KEY=value line")
	}
	key, v := m[1], m[2]
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	pair := func(v string) bool { what, why, ok := strings.Cut(v, " | "); return ok && what != "" && why != "" }
	switch key {
	case oidcNote:
		c.Notes = append(c.Notes, v)
	case oidcDeviation, oidcConfigSource:
		if !pair(v) {
			return fmt.Errorf(`%s=%s: want "what | why" (or "what | url")`, key, v)
		}
		if key == oidcDeviation {
			c.Deviations = append(c.Deviations, v)
		} else {
			c.Sources = append(c.Sources, v)
		}
	case oidcSetting:
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return errors.New("SETTING wants key=value")
		}
		c.Settings = append(c.Settings, v)
	case oidcLoginField:
		kv, err := login.ParseField(v)
		if err != nil {
			return fmt.Errorf("LOGIN_FIELD=%s: want name=value (a field the login form is sent with)", v)
		}
		c.LoginFields = append(c.LoginFields, kv)
		c.lines[key] = n
	case "WARMUP_S":
		return errors.New("WARMUP_S is no longer a setting: every product is warmed by one rule, until its throughput is stable (docs/design-methodology.md, Warmup)")
	default:
		if oidcKey(key) == nil {
			return fmt.Errorf("unknown key %s (the keys: examples/oidc/myidp.env, provision oidc --help)", key)
		}
		c.values[key], c.lines[key] = v, n
	}
	return nil
}

func oidcKey(name string) *OIDCKey {
	for i := range OIDCKeys {
		if OIDCKeys[i].Name == name {
			return &OIDCKeys[i]
		}
	}
	return nil
}

// Line is the line key was last set on, or 0.
func (c *OIDCConfig) Line(key string) int { return c.lines[key] }

// Get returns the value in force of a single-valued key: the file's, else
// its default (USER_CLIENT_* follow CLIENT_*, DISCOVERY_URL the issuer,
// READY_URL the discovery URL, LOGIN_SCOPE USER_SCOPE, CLIENT_USERINFO_SCOPE
// CLIENT_SCOPE, JWT_BEARER_SUB
// JWT_BEARER_ISS, JWT_BEARER_AUD ISSUER); a file's path is absolute.
func (c *OIDCConfig) Get(key string) string {
	v := c.values[key]
	k := oidcKey(key)
	switch {
	case k == nil:
		return ""
	case v != "" && (k.Kind == oidcPath || k.Kind == oidcSecret):
		return c.path(v)
	case v != "":
		return v
	}
	switch key {
	case "USER_CLIENT_ID", "USER_CLIENT_SECRET_FILE", "USER_CLIENT_AUTH":
		return c.Get(strings.TrimPrefix(key, "USER_"))
	case "DISCOVERY_URL":
		return strings.TrimSuffix(c.values["ISSUER"], "/") + "/.well-known/openid-configuration"
	case "READY_URL":
		return c.Get("DISCOVERY_URL")
	case "LOGIN_SCOPE":
		return c.Get("USER_SCOPE")
	case "CLIENT_USERINFO_SCOPE":
		return c.Get("CLIENT_SCOPE")
	case "JWT_BEARER_SUB":
		return c.Get("JWT_BEARER_ISS")
	case "JWT_BEARER_AUD":
		return c.Get("ISSUER")
	}
	return k.Default
}

// set reports whether the file sets key (a default is not set).
func (c *OIDCConfig) set(key string) bool { return c.values[key] != "" }

// lineOf is the line of the first of keys the file sets, or 0.
func (c *OIDCConfig) lineOf(keys ...string) int {
	for _, k := range keys {
		if n := c.lines[k]; n > 0 && c.set(k) {
			return n
		}
	}
	return 0
}

func (c *OIDCConfig) path(v string) string {
	switch {
	case strings.HasPrefix(v, "~/"):
		return filepath.Join(c.Home, v[2:])
	case filepath.IsAbs(v):
		return v
	}
	return filepath.Join(c.Dir, v)
}

// Env returns the values the adapter works with, KEY=value, one a line:
// every key of OIDCKeys as Get has it, then CONFIG (the file's absolute
// path), CONFIG_DIR and IDP_PORT (the port of a loopback ISSUER, else empty).
// No value holds a secret (the file names secret files).
func (c *OIDCConfig) Env() string {
	var b strings.Builder
	for _, k := range OIDCKeys {
		fmt.Fprintf(&b, "%s=%s\n", k.Name, c.Get(k.Name))
	}
	fmt.Fprintf(&b, "CONFIG=%s\nCONFIG_DIR=%s\nIDP_PORT=%s\n", c.Abs, c.Dir, c.loopbackPort())
	return b.String()
}

// loopbackPort is the port of a loopback http(s) ISSUER, or "".
func (c *OIDCConfig) loopbackPort() string {
	m := oidcLoop.FindStringSubmatch(c.Get("ISSUER"))
	switch {
	case m == nil:
		return ""
	case m[4] != "":
		return m[4]
	case m[1] == "https":
		return "443"
	}
	return "80"
}

// loginProtocol is LOGIN, or "" for none.
func (c *OIDCConfig) loginProtocol() string {
	if l := c.Get("LOGIN"); l != "none" {
		return l
	}
	return ""
}

// formLogin reports whether LOGIN fills an HTML form.
func (c *OIDCConfig) formLogin() bool {
	l := c.loginProtocol()
	return l == login.Form || l == login.FormPage
}

// keyLine is the line a problem with key is reported at: key's own, else
// the line of the key that asks for it (then), else 0.
func (c *OIDCConfig) keyLine(key string, then ...string) int {
	return cmp.Or(c.lineOf(key), c.lineOf(then...))
}
