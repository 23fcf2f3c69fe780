package oidc

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/product"
)

// OIDCDiscovery is a discovery document's top-level fields; nil: none was
// read.
type OIDCDiscovery map[string]json.RawMessage

// ParseOIDCDiscovery decodes a discovery document, which must be one JSON
// object.
func ParseOIDCDiscovery(b []byte) (OIDCDiscovery, error) {
	var d OIDCDiscovery
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil || d == nil || dec.More() {
		return nil, errors.New("not a JSON object")
	}
	return d, nil
}

// String is a string field, or "" when it is absent or not a string.
func (d OIDCDiscovery) String(field string) string {
	var s string
	if json.Unmarshal(d[field], &s) != nil {
		return ""
	}
	return s
}

// endpoint is the override key, else the discovery document's field.
func (c *OIDCConfig) endpoint(key, field string, d OIDCDiscovery) string {
	if v := c.Get(key); v != "" {
		return v
	}
	return d.String(field)
}

// oidcEndpoints maps a scenario to its endpoint's override key and
// discovery field.
var oidcEndpoints = map[string][2]string{
	"client_credentials":       {"TOKEN_ENDPOINT", "token_endpoint"},
	"client_credentials_login": {"TOKEN_ENDPOINT", "token_endpoint"},
	"jwt_bearer":               {"TOKEN_ENDPOINT", "token_endpoint"},
	"refresh":                  {"TOKEN_ENDPOINT", "token_endpoint"},
	"introspect":               {"INTROSPECTION_ENDPOINT", "introspection_endpoint"},
	"userinfo":                 {"USERINFO_ENDPOINT", "userinfo_endpoint"},
	"auth_code":                {"AUTHORIZATION_ENDPOINT", "authorization_endpoint"},
}

// Endpoint is the URL measured for scenario.
func (c *OIDCConfig) Endpoint(scenario string, d OIDCDiscovery) (string, error) {
	url := ""
	if scenario == "discovery" {
		url = c.Get("DISCOVERY_URL")
	} else if e, ok := oidcEndpoints[scenario]; ok {
		url = c.endpoint(e[0], e[1], d)
	}
	if url == "" {
		return "", fmt.Errorf("no endpoint for %s (discovery document: %s)", scenario, c.Get("DISCOVERY_URL"))
	}
	return url, nil
}

// NA is why scenario cannot run with this configuration and discovery
// document, or "".
func (c *OIDCConfig) NA(scenario string, d OIDCDiscovery) string {
	file := filepath.Base(c.File)
	switch scenario {
	case "discovery":
		return ""
	case "client_credentials":
		if c.Get("CLIENT_ID") == "" {
			return "no CLIENT_ID in " + file
		}
		return cmp.Or(c.endpointReason(scenario, d), c.grantReason("client_credentials", d))
	case "client_credentials_login":
		if r := c.NA("client_credentials", d); r != "" {
			return "its token comes from client_credentials, which is N/A: " + r
		}
		if r := c.endpointReason("userinfo", d); r != "" {
			return r
		}
		if c.Get("CLIENT_USERINFO") != "yes" {
			return "CLIENT_USERINFO is not yes in " + file + ": S2l calls userinfo with the client's own client_credentials " +
				"token, which OpenID Connect's userinfo (an end user's) need not answer with a sub; set it where yours does"
		}
		return ""
	case "jwt_bearer":
		if c.Get("JWT_BEARER_KEY_FILE") == "" {
			return "no JWT_BEARER_KEY_FILE in " + file + ": S2j signs RFC 7523 assertions with a key the IdP trusts"
		}
		return cmp.Or(c.endpointReason(scenario, d), c.grantReason(GrantJWTBearer, d))
	case "auth_code":
		if c.loginProtocol() == "" {
			return "no LOGIN in " + file + ": S4 logs users in through a login protocol (LOGIN=form, form-page or admin-accept)"
		}
		return cmp.Or(c.endpointReason(scenario, d), c.endpointReason("refresh", d), c.grantReason("authorization_code", d))
	case "introspect":
		if r := c.endpointReason(scenario, d); r != "" {
			return r
		}
		if c.Get("INTROSPECT_TOKENS") == "user" {
			return c.userTokensReason()
		}
		if r := c.NA("client_credentials", d); r != "" {
			return "its tokens come from client_credentials (INTROSPECT_TOKENS), which is N/A: " + r
		}
		return ""
	case "refresh":
		return cmp.Or(c.endpointReason(scenario, d), c.grantReason("refresh_token", d), c.userTokensReason())
	case "userinfo":
		return cmp.Or(c.endpointReason(scenario, d), c.userTokensReason())
	}
	return "the generic adapter does not map scenario " + scenario
}

// grantReason is why grant cannot be measured, or "".
func (c *OIDCConfig) grantReason(grant string, d OIDCDiscovery) string {
	if g := c.Get("GRANT_TYPES"); g != "" {
		if !slices.Contains(strings.Fields(g), grant) {
			return fmt.Sprintf("GRANT_TYPES in %s (%s) lacks %s", filepath.Base(c.File), g, grant)
		}
		return ""
	}
	if d == nil {
		return fmt.Sprintf("no discovery document read (is the IdP up? %s)", c.Get("DISCOVERY_URL"))
	}
	raw, ok := d["grant_types_supported"]
	if !ok || string(raw) == "null" {
		if grant == "authorization_code" {
			return ""
		}
		return `the discovery document has no grant_types_supported, so RFC 8414's default ["authorization_code","implicit"] applies: no ` +
			grant + " (set GRANT_TYPES to override)"
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && slices.Contains(list, grant) {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Write(raw)
	}
	return fmt.Sprintf("discovery grant_types_supported is %s: no %q", b.String(), grant)
}

// endpointReason is why scenario's endpoint is unknown or not on
// loopback, or "".
func (c *OIDCConfig) endpointReason(scenario string, d OIDCDiscovery) string {
	e := oidcEndpoints[scenario]
	url := c.endpoint(e[0], e[1], d)
	switch {
	case url == "" && d == nil:
		return fmt.Sprintf("no discovery document read (is the IdP up? %s), and %s is not set", c.Get("DISCOVERY_URL"), e[0])
	case url == "":
		return fmt.Sprintf("the discovery document (%s) has no %s, and %s is not set", c.Get("DISCOVERY_URL"), e[1], e[0])
	}
	if why := loopbackURL(url); why != "" {
		return fmt.Sprintf("the discovery document's %s %s: %s (override it with %s)", e[1], url, why, e[0])
	}
	return ""
}

func (c *OIDCConfig) userTokensReason() string {
	if c.Get("USER_TOKENS") != "none" {
		return ""
	}
	return "no way to obtain user tokens is configured (USER_TOKENS=none)"
}

// clientArgs are loadstep's and mintpool's arguments for the client prefix
// (CLIENT or USER_CLIENT) authenticating by auth ("": its own).
func (c *OIDCConfig) clientArgs(prefix, auth string) []string {
	auth = cmp.Or(auth, c.Get(prefix+"_AUTH"))
	if auth == "none" {
		return []string{"--client-auth", "none"}
	}
	return []string{"--client-id", c.Get(prefix + "_ID"), "--client-secret-file", c.Get(prefix + "_SECRET_FILE"), "--client-auth", auth}
}

// scope is --scope S, or nothing for an empty s.
func scope(s string) []string {
	if s == "" {
		return nil
	}
	return []string{"--scope", s}
}

// loginArgs are loadstep's and mintpool's arguments for LOGIN: the user
// client, the redirect URI, the users (admin-accept: as subjects, with its
// admin API) and, for a form, its fields and consent answered (the
// generic adapter answers a consent form wherever the IdP shows one).
func (c *OIDCConfig) loginArgs(subject string) []string {
	args := slices.Concat(c.clientArgs("USER_CLIENT", ""), []string{"--redirect-uri", c.Get("REDIRECT_URI")})
	if c.loginProtocol() == login.AdminAccept {
		return slices.Concat(args, []string{"--admin-url", c.Get("LOGIN_ADMIN_URL"), subject, c.Get("USERNAME"), "--users", c.Get("USERS")})
	}
	args = slices.Concat(args, []string{"--username", c.Get("USERNAME"), "--users", c.Get("USERS"),
		"--password-file", c.Get("PASSWORD_FILE"), "--login-consent"})
	for _, f := range [][2]string{{"--login-user-field", "LOGIN_USER_FIELD"}, {"--login-password-field", "LOGIN_PASSWORD_FIELD"}} {
		if v := c.Get(f[1]); v != "" {
			args = append(args, f[0], v)
		}
	}
	for _, kv := range c.LoginFields {
		args = append(args, "--login-field", kv[0]+"="+kv[1])
	}
	return args
}

// LoadArgs are loadstep's arguments for scenario, beyond the ladder's:
// --product names the configured product (the later flag wins over the
// adapter's name); a pool-fed scenario's --pool-mode. d supplies the
// endpoints a scenario calls beside --url (its own: Endpoint).
func (c *OIDCConfig) LoadArgs(scenario string, d OIDCDiscovery) []string {
	args := []string{"--product", c.Get("NAME")}
	switch scenario {
	case "client_credentials":
		args = slices.Concat(args, c.clientArgs("CLIENT", ""), scope(c.Get("CLIENT_SCOPE")))
	case "client_credentials_login":
		userinfo, _ := c.Endpoint("userinfo", d)
		args = slices.Concat(args, c.clientArgs("CLIENT", ""), scope(c.Get("CLIENT_USERINFO_SCOPE")), []string{"--userinfo-url", userinfo})
	case "jwt_bearer":
		args = slices.Concat(args, c.clientArgs("CLIENT", c.Get("JWT_BEARER_CLIENT_AUTH")), scope(c.Get("JWT_BEARER_SCOPE")),
			[]string{"--pool-mode", "reuse"})
	case "auth_code":
		token, _ := c.Endpoint("refresh", d)
		args = slices.Concat(args, []string{"--login", c.loginProtocol(), "--token-url", token}, c.loginArgs("--username"),
			[]string{"--scope", c.Get("LOGIN_SCOPE")})
	case "introspect":
		prefix := "CLIENT"
		if c.Get("INTROSPECT_TOKENS") == "user" {
			prefix = "USER_CLIENT"
		}
		args = append(append(args, c.clientArgs(prefix, c.Get("INTROSPECT_AUTH"))...), "--pool-mode", "reuse")
	case "refresh":
		args = append(append(args, c.clientArgs("USER_CLIENT", "")...), "--pool-mode", c.Get("REFRESH_POOL_MODE"))
	case "userinfo":
		args = append(args, "--pool-mode", "reuse")
	}
	return args
}

// OIDCPool is how a scenario's pool is minted and recorded (pools.jsonl).
type OIDCPool struct {
	Kind string // access_token | refresh_token | assertion
	Mode string // loadstep's --pool-mode
	// Flow: client_credentials, password, jwt-bearer or LOGIN's protocol
	// (mintpool), or command (TOKEN_COMMAND).
	Flow string
	// Args are mintpool's arguments but -n and -o; none for Flow command.
	Args []string
}

// Pool is the plan of scenario's pool (client_credentials and auth_code:
// the one credential setup checks the client and the login with). The
// files the plan names must be readable.
func (c *OIDCConfig) Pool(scenario string, d OIDCDiscovery) (OIDCPool, error) {
	switch {
	case scenario == "auth_code":
		return c.loginPool(OIDCPool{Kind: "access_token", Mode: "reuse"}, d, c.Get("LOGIN_SCOPE"))
	case scenario == "client_credentials", scenario == "introspect" && c.Get("INTROSPECT_TOKENS") != "user":
		p := OIDCPool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials"}
		return p, c.mintArgs(&p, d, c.clientArgs("CLIENT", ""), scope(c.Get("CLIENT_SCOPE")), "CLIENT_SECRET_FILE")
	case scenario == "jwt_bearer":
		return c.jwtPool(d)
	case scenario == "introspect", scenario == "userinfo":
		return c.userPool(OIDCPool{Kind: "access_token", Mode: "reuse"}, d)
	case scenario == "refresh":
		return c.userPool(OIDCPool{Kind: "refresh_token", Mode: c.Get("REFRESH_POOL_MODE")}, d)
	}
	return OIDCPool{}, fmt.Errorf("scenario %s takes no pool", scenario)
}

func (c *OIDCConfig) userPool(p OIDCPool, d OIDCDiscovery) (OIDCPool, error) {
	switch c.Get("USER_TOKENS") {
	case "command":
		p.Flow = "command"
		return p, nil
	case "password":
		p.Flow = "password"
		user := []string{"--username", c.Get("USERNAME"), "--users", c.Get("USERS"), "--password-file", c.Get("PASSWORD_FILE")}
		return p, c.mintArgs(&p, d, c.clientArgs("USER_CLIENT", ""), append(user, scope(c.Get("USER_SCOPE"))...), "PASSWORD_FILE", c.userSecretKey())
	case "login":
		return c.loginPool(p, d, c.Get("USER_SCOPE"))
	}
	return OIDCPool{}, errors.New("no user tokens: USER_TOKENS=none")
}

// loginPool: tokens minted through LOGIN's protocol, asking for scope.
func (c *OIDCConfig) loginPool(p OIDCPool, d OIDCDiscovery, scopes string) (OIDCPool, error) {
	p.Flow = c.loginProtocol()
	if p.Flow == "" {
		return OIDCPool{}, errors.New("no LOGIN: no login to mint with")
	}
	auth, err := c.Endpoint("auth_code", d)
	if err != nil {
		return OIDCPool{}, err
	}
	needs := []string{c.userSecretKey()}
	if c.formLogin() {
		needs = append(needs, "PASSWORD_FILE")
	}
	// mintpool's client flags come with the login's; the auth URL first.
	return p, c.mintArgs(&p, d, []string{"--auth-url", auth}, append(c.loginArgs("--subject"), scope(scopes)...), needs...)
}

// userSecretKey is the key of the user client's secret file.
func (c *OIDCConfig) userSecretKey() string {
	if c.values["USER_CLIENT_SECRET_FILE"] == "" {
		return "CLIENT_SECRET_FILE"
	}
	return "USER_CLIENT_SECRET_FILE"
}

// jwtPool: assertions mintpool signs with JWT_BEARER_KEY_FILE, reused
// (each a grant of its own at the IdP: the jti differs, the IdP may keep
// no record).
func (c *OIDCConfig) jwtPool(d OIDCDiscovery) (OIDCPool, error) {
	p := OIDCPool{Kind: "assertion", Mode: "reuse", Flow: "jwt-bearer"}
	more := []string{"--key-file", c.Get("JWT_BEARER_KEY_FILE"), "--aud", c.Get("JWT_BEARER_AUD"), "--ttl", c.Get("JWT_BEARER_TTL_S") + "s"}
	for _, f := range [][2]string{{"--kid", "JWT_BEARER_KID"}, {"--iss", "JWT_BEARER_ISS"}, {"--sub", "JWT_BEARER_SUB"}} {
		if v := c.Get(f[1]); v != "" {
			more = append(more, f[0], v)
		}
	}
	if err := c.needFile("JWT_BEARER_KEY_FILE"); err != nil {
		return OIDCPool{}, err
	}
	url, err := c.Endpoint("jwt_bearer", d)
	if err != nil {
		return OIDCPool{}, err
	}
	p.Args = slices.Concat([]string{"--flow", p.Flow, "--token-url", url}, more, []string{"-P", "8", "--product", c.Get("NAME")})
	return p, nil
}

// mintArgs fills p.Args for mintpool's flow p.Flow; the files of needs
// must be readable.
func (c *OIDCConfig) mintArgs(p *OIDCPool, d OIDCDiscovery, client, more []string, needs ...string) error {
	for _, k := range needs {
		if err := c.needFile(k); err != nil {
			return err
		}
	}
	url, err := c.Endpoint("client_credentials", d)
	if err != nil {
		return err
	}
	p.Args = slices.Concat([]string{"--flow", p.Flow, "--token-url", url}, client, more,
		[]string{"-P", "8", "--emit", p.Kind, "--product", c.Get("NAME")})
	return nil
}

// needFile: the file key names is readable (secrets are read by the tools).
func (c *OIDCConfig) needFile(key string) error {
	f := c.Get(key)
	if f == "" {
		return fmt.Errorf("%s: %s is not set", c.File, key)
	}
	fh, err := os.Open(f)
	if err != nil {
		return fmt.Errorf("%s: %s: no readable file %s", c.File, key, f)
	}
	return fh.Close()
}

// ParseOIDCTokens reads what TOKEN_COMMAND printed: one token a line, '#'
// lines and blank lines ignored.
func ParseOIDCTokens(r io.Reader) ([]string, error) {
	var toks []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		case strings.ContainsAny(line, " \t\r\v\f"):
			return nil, errors.New("TOKEN_COMMAND printed a line that is not one token (whitespace inside)")
		default:
			toks = append(toks, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading TOKEN_COMMAND's tokens: %w", err)
	}
	if len(toks) == 0 {
		return nil, errors.New("TOKEN_COMMAND printed no token")
	}
	return toks, nil
}

// MetricsArgs are loadstep's --server-metrics arguments for scenario:
// METRICS_URL with the scenario's METRICS_SELECT_*; none without both.
func (c *OIDCConfig) MetricsArgs(scenario string) []string {
	url, sel := c.Get("METRICS_URL"), c.Get("METRICS_SELECT_"+strings.ToUpper(scenario))
	if url == "" || sel == "" {
		return nil
	}
	return []string{"--server-metrics", url, "--server-metrics-select", sel, "--server-metrics-status-label", c.Get("METRICS_STATUS_LABEL")}
}

// TTL is how long scenario's pool credentials live, s, or "".
func (c *OIDCConfig) TTL(scenario string) string {
	switch scenario {
	case "introspect", "userinfo":
		return c.Get("ACCESS_TOKEN_TTL_S")
	case "refresh":
		return c.Get("REFRESH_TOKEN_TTL_S")
	case "jwt_bearer":
		return c.Get("JWT_BEARER_TTL_S")
	}
	return ""
}

// SampleArgs are the sampler's arguments: the process group the adapter
// started (pidfile) when there is a START_COMMAND, else PIDFILE, else
// MATCH, else the host alone (with a warning); then PG_DSN's database.
func (c *OIDCConfig) SampleArgs(pidfile string) (args []string, warning string) {
	name := c.Get("NAME")
	switch {
	case c.Get("START_COMMAND") != "":
		args = []string{"--pidfile", pidfile, "--name", name}
	case c.Get("PIDFILE") != "":
		args = []string{"--pidfile", c.Get("PIDFILE"), "--name", name}
	case c.Get("MATCH") != "":
		args = []string{"--match", c.Get("MATCH"), "--name", name}
	default:
		args, warning = []string{"--host=true"}, "no START_COMMAND, PIDFILE or MATCH: the sampler records the host only"
	}
	if dsn := c.Get("PG_DSN"); dsn != "" {
		args = append(args, "--postgres", dsn)
	}
	return args, warning
}

// MetaArgs are provision meta's arguments for the product's part (--entry
// oidc): its params, then the NOTE, DEVIATION, CONFIG_SOURCE and SETTING
// lines in order.
func (c *OIDCConfig) MetaArgs() []string {
	args := []string{"--entry", "oidc"}
	for _, p := range [][2]string{{"config_file", c.Abs}, {"issuer", c.Get("ISSUER")}, {"discovery", c.Get("DISCOVERY_URL")},
		{"client_auth", c.Get("CLIENT_AUTH")}, {"user_tokens", c.UserTokens()}, {"s5_pool_mode", c.Get("REFRESH_POOL_MODE")},
		{"s3_tokens", c.Get("INTROSPECT_TOKENS")}, {"s3_client_auth", c.Get("INTROSPECT_AUTH")}, {"start_command", c.Get("START_COMMAND")},
		{"token_endpoint", c.Get("TOKEN_ENDPOINT")}, {"introspection_endpoint", c.Get("INTROSPECTION_ENDPOINT")},
		{"userinfo_endpoint", c.Get("USERINFO_ENDPOINT")}, {"grant_types", c.Get("GRANT_TYPES")},
		{"authorization_endpoint", c.Get("AUTHORIZATION_ENDPOINT")}, {"login", c.LoginWords()}, {"client_userinfo", c.Get("CLIENT_USERINFO")},
		{"jwt_bearer", c.JWTBearerWords()}} {
		args = append(args, "--param", p[0]+"="+p[1])
	}
	for _, l := range []struct {
		flag string
		vals []string
	}{{"--note", c.Notes}, {"--deviation", c.Deviations}, {"--config-source", c.Sources}, {"--setting", c.Settings}} {
		for _, v := range l.vals {
			args = append(args, l.flag, v)
		}
	}
	return args
}

// MetaScenarioArgs are provision meta's --scenario-na S=WHY or --endpoint
// S=URL of every scenario, by the configuration and discovery document d
// (what the adapter's na and endpoint answer); a scenario with neither
// (no URL known) gets none.
func (c *OIDCConfig) MetaScenarioArgs(d OIDCDiscovery) []string {
	var args []string
	for _, s := range product.Scenarios() {
		if why := c.NA(s, d); why != "" {
			args = append(args, "--scenario-na", s+"="+why)
		} else if url, err := c.Endpoint(s, d); err == nil {
			args = append(args, "--endpoint", s+"="+url)
		}
	}
	return args
}

// UserTokens is how user tokens are had, in words.
func (c *OIDCConfig) UserTokens() string {
	switch c.Get("USER_TOKENS") {
	case "password":
		return fmt.Sprintf("password grant: %s over %s users, client %s, scope %s",
			c.Get("USERNAME"), c.Get("USERS"), c.Get("USER_CLIENT_ID"), c.Get("USER_SCOPE"))
	case "login":
		return fmt.Sprintf("login %s: %s over %s users, client %s, scope %s",
			c.loginProtocol(), c.Get("USERNAME"), c.Get("USERS"), c.Get("USER_CLIENT_ID"), c.Get("USER_SCOPE"))
	case "command":
		return "command: " + c.Get("TOKEN_COMMAND")
	}
	return "none"
}

// LoginWords is S4's login in words, or "none".
func (c *OIDCConfig) LoginWords() string {
	if c.loginProtocol() == "" {
		return "none"
	}
	auth := c.Get("AUTHORIZATION_ENDPOINT")
	if auth == "" {
		auth = "the discovered authorization endpoint"
	}
	return c.loginWords(auth) + ", client " + c.Get("USER_CLIENT_ID") + ", redirect URI " + c.Get("REDIRECT_URI")
}

// JWTBearerWords is S2j's assertions in words, or "none".
func (c *OIDCConfig) JWTBearerWords() string {
	if c.Get("JWT_BEARER_KEY_FILE") == "" {
		return "none"
	}
	return fmt.Sprintf("signed by mintpool with %s (kid %s, iss %s, sub %s, aud %s, lifetime %ss), client auth %s",
		c.Get("JWT_BEARER_KEY_FILE"), orFile(c.Get("JWT_BEARER_KID")), orFile(c.Get("JWT_BEARER_ISS")),
		orFile(c.Get("JWT_BEARER_SUB")), c.Get("JWT_BEARER_AUD"), c.Get("JWT_BEARER_TTL_S"), c.Get("JWT_BEARER_CLIENT_AUTH"))
}
