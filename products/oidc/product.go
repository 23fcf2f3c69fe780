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
	"regexp"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// OIDC is the generic adapter (products/oidc/adapter): any OpenID provider
// described by a KEY=value configuration file (OIDCConfig, below).
// Its product name is the file's NAME, its N/A reasons depend on the file
// and the discovery document (OIDCConfig.NA; the adapter passes them to
// provision meta as --scenario-na, with its --endpoint URLs:
// MetaScenarioArgs, so its entry has no NA and no answers), and the file's NOTE,
// DEVIATION, CONFIG_SOURCE and SETTING lines come in as Inputs.Config.
func Product() product.Product {
	return product.Product{
		Name:          "oidc",
		Docs:          "examples/oidc/README.md",
		TakesConfig:   true,
		ReadFactsNA:   "the generic adapter knows no product's storage: its facts are the configuration file's (SETTING, NOTE, DEVIATION lines) and the listeners check",
		ServerMetrics: servermetrics.Product{NA: "the generic adapter's series are its configuration's (METRICS_URL, METRICS_SELECT_<SCENARIO>), recorded by each step"},
		Params: []product.Param{
			{Name: "config_file", Doc: "the configuration file (IDPBENCH_OIDC_CONFIG)"},
			{Name: "issuer", Doc: "ISSUER"},
			{Name: "discovery", Doc: "the discovery document's URL (DISCOVERY_URL, else from ISSUER)"},
			{Name: "client_auth", Doc: "CLIENT_AUTH (default basic)"},
			{Name: "user_tokens", Doc: "how user tokens are had, in words (USER_TOKENS and its keys)"},
			{Name: "s5_pool_mode", Doc: "REFRESH_POOL_MODE (default chain)"},
			{Name: "s3_tokens", Doc: "INTROSPECT_TOKENS (default client_credentials)"},
			{Name: "s3_client_auth", Doc: "INTROSPECT_AUTH; empty: the introspecting client's own"},
			{Name: "start_command", Doc: "START_COMMAND; empty: the IdP was already running"},
			{Name: "token_endpoint", Doc: "TOKEN_ENDPOINT, an override of the discovery document's; may be empty"},
			{Name: "introspection_endpoint", Doc: "INTROSPECTION_ENDPOINT override; may be empty"},
			{Name: "userinfo_endpoint", Doc: "USERINFO_ENDPOINT override; may be empty"},
			{Name: "grant_types", Doc: "GRANT_TYPES override; may be empty"},
		},
		Part: oidcPart,
	}
}

func oidcPart(in product.Inputs) schema.Meta {
	disc, cfgFile, start := in.P("discovery"), in.P("config_file"), in.P("start_command")
	s3auth := in.P("s3_client_auth")
	if s3auth == "" {
		s3auth = "the introspecting client's own"
	}
	coldStart := "START_COMMAND under coldstart: " + start
	if start == "" {
		coldStart = "N/A: no START_COMMAND; the IdP was already running"
	}
	m := schema.Meta{
		Settings: map[string]string{
			"adapter": "oidc (generic: products/oidc/adapter)", "config_file": cfgFile,
			"issuer": in.P("issuer"), "discovery": disc, "client_auth": in.P("client_auth"), "user_tokens": in.P("user_tokens"),
			"s5_pool_mode": in.P("s5_pool_mode"), "s3_tokens": in.P("s3_tokens"), "s3_client_auth": s3auth, "cold_start": coldStart,
		},
		ConfigSources: in.Config.Sources,
		Deviations:    in.Config.Deviations,
		Notes: append(in.Config.Notes, "Measured through the generic oidc adapter: endpoints from the discovery document ("+disc+
			") unless overridden; configuration "+cfgFile+"."),
	}
	for _, kv := range in.Config.Settings {
		k, v, _ := strings.Cut(kv, "=")
		m.Settings[k] = v
	}
	for _, o := range []struct{ what, param string }{{"token endpoint", "token_endpoint"}, {"introspection endpoint", "introspection_endpoint"},
		{"userinfo endpoint", "userinfo_endpoint"}, {"grant types", "grant_types"}} {
		if v := in.P(o.param); v != "" {
			m.Deviations = append(m.Deviations, schema.Note{What: o.what + " overridden: " + v,
				Why: "set in the configuration file, not taken from the discovery document"})
		}
	}
	if start == "" {
		m.Notes = append(m.Notes, "Cold start N/A: no START_COMMAND in the configuration, so the IdP was already running when the run began.")
	}
	return m
}

// The generic adapter's configuration file (IDPBENCH_OIDC_CONFIG) is
// KEY=value lines, read here, never sourced or evaluated by the shell: no
// quoting rules beyond one optional pair of surrounding quotes ("..." or
// '...'), no variable expansion, no inline comments; surrounding white space
// is dropped; a line starting with # is a comment; a later line overrides an
// earlier one. An empty value is the same as no line. A file value may start
// with ~/ (the home directory) or be relative to the file's directory.
// NOTE, DEVIATION, CONFIG_SOURCE and SETTING repeat and keep their order.
// OIDCKeys lists the other keys, with their defaults and what they mean.
//
// N/A scenarios follow the discovery document: no introspection_endpoint
// (and no override) makes S3 N/A, no userinfo_endpoint S6,
// grant_types_supported without client_credentials or refresh_token S2 or
// S5 (absent, RFC 8414's default ["authorization_code", "implicit"]
// applies); the reason quotes it (OIDCConfig.NA).

// OIDCKey is one key of the configuration file.
type OIDCKey struct {
	Name    string
	Default string   // the value when unset; see OIDCConfig.Get for the keys that follow another
	OneOf   []string // the values allowed; nil: any
	Kind    oidcKind // what else the value must be
	Doc     string
}

type oidcKind int

const (
	oidcText   oidcKind = iota
	oidcPath            // a file: ~/ or relative to the configuration's directory
	oidcNumber          // a whole number
)

// Repeatable keys of the configuration file.
const (
	oidcNote         = "NOTE"          // a note in the fairness appendix
	oidcDeviation    = "DEVIATION"     // what | why: a departure from the IdP's documented defaults
	oidcConfigSource = "CONFIG_SOURCE" // what | url: where the IdP's configuration comes from
	oidcSetting      = "SETTING"       // key=value: an effective setting worth reporting
)

// OIDCKeys are the configuration file's single-valued keys, in the order
// OIDCConfig.Env prints them.
var OIDCKeys = []OIDCKey{
	{Name: "NAME", Doc: "product name in the results and the report (A-Z a-z 0-9 . _ : -); required"},
	{Name: "VERSION", Default: "unknown", Doc: "product version for the report"},
	{Name: "ISSUER", Doc: "the issuer, an http(s) URL (loopback only, like every target here); required"},
	{Name: "DISCOVERY_URL", Doc: "the discovery document (default ISSUER/.well-known/openid-configuration)"},
	{Name: "TOKEN_ENDPOINT", Doc: "override of the discovered token endpoint (recorded as a deviation)"},
	{Name: "INTROSPECTION_ENDPOINT", Doc: "override of the discovered introspection endpoint (a deviation)"},
	{Name: "USERINFO_ENDPOINT", Doc: "override of the discovered userinfo endpoint (a deviation)"},
	{Name: "GRANT_TYPES", Doc: "overrides discovery's grant_types_supported (space separated; a deviation)"},
	{Name: "CLIENT_ID", Doc: "the confidential client of S2 (client_credentials)"},
	{Name: "CLIENT_SECRET_FILE", Kind: oidcPath, Doc: "file holding its secret (never the secret itself)"},
	{Name: "CLIENT_AUTH", Default: "basic", OneOf: []string{"basic", "post"}, Doc: "how the client authenticates"},
	{Name: "CLIENT_SCOPE", Doc: "scope sent with client_credentials requests (default none)"},
	{Name: "USER_TOKENS", Default: "none", OneOf: []string{"password", "command", "none"},
		Doc: "how user tokens (S3 with INTROSPECT_TOKENS=user, S5 refresh, S6 userinfo) are obtained"},
	{Name: "USER_CLIENT_ID", Doc: "the client user tokens are issued to, which also refreshes them in S5 (default CLIENT_ID)"},
	{Name: "USER_CLIENT_SECRET_FILE", Kind: oidcPath, Doc: "its secret's file (default CLIENT_SECRET_FILE)"},
	{Name: "USER_CLIENT_AUTH", OneOf: []string{"basic", "post"}, Doc: "how it authenticates (default CLIENT_AUTH)"},
	{Name: "USERNAME", Default: "user%d", Doc: `password grant: the user name; "%d" runs over USERS users sharing one password`},
	{Name: "USERS", Default: "1", Kind: oidcNumber, Doc: "password grant: how many users"},
	{Name: "PASSWORD_FILE", Kind: oidcPath, Doc: "password grant: the file holding their password"},
	{Name: "USER_SCOPE", Default: "openid", Doc: "password grant: the scope asked for"},
	{Name: "TOKEN_COMMAND", Doc: "command (bash -c, in the file's directory) printing tokens, one a line ('#' lines ignored); " +
		"it gets IDPBENCH_POOL_COUNT (how many), IDPBENCH_POOL_EMIT (access_token | refresh_token), IDPBENCH_POOL_SCENARIO, " +
		`and the idpbench tools first on PATH, e.g. mintpool --flow admin-accept ... -n "$IDPBENCH_POOL_COUNT"`},
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
	{Name: "READY_URL", Doc: "answers 200 when ready (default: the discovery URL)"},
	{Name: "READY_TIMEOUT_S", Default: "120", Kind: oidcNumber, Doc: "how long a start may take, s"},
	{Name: "PIDFILE", Kind: oidcPath, Doc: "sampler --pidfile of the IdP's root process when the adapter did not start it (its process tree is sampled)"},
	{Name: "MATCH", Doc: `else sampler --match REGEX for the IdP's processes (full command line, e.g. "kc\.sh start")`},
	{Name: "PG_DSN", Doc: "sampler --postgres DSN of the IdP's database, without a password (use ~/.pgpass or PGPASSFILE)"},
	{Name: "ACCESS_TOKEN_TTL_S", Kind: oidcNumber, Doc: "access token lifetime, s (pools are reminted in time)"},
	{Name: "REFRESH_TOKEN_TTL_S", Kind: oidcNumber, Doc: "refresh token lifetime, s"},
	{Name: "METRICS_URL", Doc: "the IdP's Prometheus text exposition (optional): loadstep scrapes it at each window's edges " +
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
	File string // the file as named; errors name it so
	Abs  string // its absolute path
	Dir  string // its absolute directory, where relative paths and the commands start
	Home string // what a leading ~/ stands for
	// The repeatable keys, in file order: NOTE; DEVIATION ("what | why");
	// CONFIG_SOURCE ("what | url"); SETTING (key=value).
	Notes, Deviations, Sources, Settings []string
	values                               map[string]string
}

// ReadOIDCConfig reads and checks the configuration file name.
func ReadOIDCConfig(name, home string) (*OIDCConfig, error) {
	f, err := os.Open(name)
	if err == nil {
		defer f.Close()
		var st os.FileInfo
		if st, err = f.Stat(); err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("no readable configuration file %s (IDPBENCH_OIDC_CONFIG)", name)
	}
	return ParseOIDCConfig(f, name, home)
}

var (
	oidcLine  = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	oidcName  = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)
	oidcURL   = regexp.MustCompile(`^https?://[^/]+`)
	oidcCount = regexp.MustCompile(`^[0-9]+$`)
	// A password in a URL DSN (user:password@) or a keyword DSN (password=).
	oidcPGPass = regexp.MustCompile(`://[^/@]*:[^/@]*@|(^|\s)password\s*=`)
	oidcLoop   = regexp.MustCompile(`^(https?)://(127\.0\.0\.1|localhost|\[::1\])(:([0-9]+))?(/|$)`)
)

// ParseOIDCConfig reads a configuration from r; file names it in errors
// (FILE:LINE for a bad line, FILE for a bad value) and its directory is
// where relative paths start.
func ParseOIDCConfig(r io.Reader, file, home string) (*OIDCConfig, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	c := &OIDCConfig{File: file, Abs: abs, Dir: filepath.Dir(abs), Home: home, values: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := c.line(strings.TrimSpace(sc.Text())); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return c, c.check()
}

// line takes one line, white space trimmed.
func (c *OIDCConfig) line(line string) error {
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
			return errors.New(`want "what | why" (or "what | url")`)
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
	case "WARMUP_S":
		return errors.New("WARMUP_S is no longer a setting: every product is warmed by one rule, until its throughput is stable (docs/design.md, Warmup)")
	default:
		if oidcKey(key) == nil {
			return fmt.Errorf("unknown key %s (the keys: docs/design.md, or provision oidc --help)", key)
		}
		c.values[key] = v
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

// check validates the values every use of the file needs.
func (c *OIDCConfig) check() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("%s: "+format, append([]any{c.File}, a...)...) }
	if !oidcName.MatchString(c.Get("NAME")) {
		return bad("NAME must be set (letters, digits, . _ : -)")
	}
	if !oidcURL.MatchString(c.Get("ISSUER")) {
		return bad("ISSUER must be an http(s) URL")
	}
	for _, k := range OIDCKeys {
		v := c.Get(k.Name)
		switch {
		case k.OneOf != nil && v != "" && !slices.Contains(k.OneOf, v):
			return bad("%s=%s: want one of %s", k.Name, v, strings.Join(k.OneOf, " "))
		case k.Kind == oidcNumber && v != "" && !oidcCount.MatchString(v):
			return bad("%s must be a whole number, got %s", k.Name, v)
		}
	}
	switch {
	case oidcPGPass.MatchString(c.Get("PG_DSN")):
		return bad("PG_DSN holds a password, which must not be in argv: put it in ~/.pgpass or PGPASSFILE")
	case c.Get("USER_TOKENS") == "command" && c.Get("TOKEN_COMMAND") == "":
		return bad("USER_TOKENS=command needs TOKEN_COMMAND")
	case c.Get("USER_TOKENS") == "password" && c.Get("PASSWORD_FILE") == "":
		return bad("USER_TOKENS=password needs PASSWORD_FILE")
	}
	return nil
}

// Get returns the value in force of a single-valued key: the file's, else
// its default (USER_CLIENT_* follow CLIENT_*, DISCOVERY_URL the issuer,
// READY_URL the discovery URL); a file's path is absolute.
func (c *OIDCConfig) Get(key string) string {
	v := c.values[key]
	k := oidcKey(key)
	switch {
	case k == nil:
		return ""
	case v != "" && k.Kind == oidcPath:
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
	}
	return k.Default
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
	"client_credentials": {"TOKEN_ENDPOINT", "token_endpoint"},
	"refresh":            {"TOKEN_ENDPOINT", "token_endpoint"},
	"introspect":         {"INTROSPECTION_ENDPOINT", "introspection_endpoint"},
	"userinfo":           {"USERINFO_ENDPOINT", "userinfo_endpoint"},
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

// oidcStaticNA are the scenarios the generic adapter never runs, with why.
var oidcStaticNA = map[string]string{
	"client_credentials_login": "the generic adapter does not map scenario client_credentials_login",
	"jwt_bearer":               "the generic adapter mints no jwt-bearer assertions (a product adapter provisions the trust; S2j is Zitadel's M2M path)",
	"auth_code":                "S4 drives a product's own login pages headlessly; the generic adapter knows no login page",
}

// NA is why scenario cannot run with this configuration and discovery
// document, or "".
func (c *OIDCConfig) NA(scenario string, d OIDCDiscovery) string {
	if why := oidcStaticNA[scenario]; why != "" {
		return why
	}
	switch scenario {
	case "discovery":
		return ""
	case "client_credentials":
		if c.Get("CLIENT_ID") == "" {
			return "no CLIENT_ID in " + filepath.Base(c.File)
		}
		return c.grantReason("client_credentials", d)
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
		return cmp.Or(c.grantReason("refresh_token", d), c.userTokensReason())
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

// endpointReason is why scenario's endpoint is unknown, or "".
func (c *OIDCConfig) endpointReason(scenario string, d OIDCDiscovery) string {
	e := oidcEndpoints[scenario]
	if c.endpoint(e[0], e[1], d) != "" {
		return ""
	}
	return fmt.Sprintf("the discovery document (%s) has no %s, and %s is not set", c.Get("DISCOVERY_URL"), e[1], e[0])
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

// LoadArgs are loadstep's arguments for scenario, beyond the ladder's:
// --product names the configured product (the later flag wins over the
// adapter's name); a pool-fed scenario's --pool-mode.
func (c *OIDCConfig) LoadArgs(scenario string) []string {
	args := []string{"--product", c.Get("NAME")}
	switch scenario {
	case "client_credentials":
		args = append(append(args, c.clientArgs("CLIENT", "")...), scope(c.Get("CLIENT_SCOPE"))...)
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
	Kind string // access_token | refresh_token
	Mode string // loadstep's --pool-mode
	Flow string // client_credentials | password (both mintpool) | command (TOKEN_COMMAND)
	// Args are mintpool's arguments but -n and -o; none for Flow command.
	Args []string
}

// Pool is the plan of scenario's pool (client_credentials: the one
// credential setup checks the client with). The files the plan names must
// be readable.
func (c *OIDCConfig) Pool(scenario string, d OIDCDiscovery) (OIDCPool, error) {
	switch {
	case scenario == "client_credentials", scenario == "introspect" && c.Get("INTROSPECT_TOKENS") != "user":
		p := OIDCPool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials"}
		return p, c.mintArgs(&p, d, c.clientArgs("CLIENT", ""), scope(c.Get("CLIENT_SCOPE")), "CLIENT_SECRET_FILE")
	case scenario == "introspect", scenario == "userinfo":
		return c.userPool(OIDCPool{Kind: "access_token", Mode: "reuse"}, d)
	case scenario == "refresh":
		return c.userPool(OIDCPool{Kind: "refresh_token", Mode: c.Get("REFRESH_POOL_MODE")}, d)
	}
	return OIDCPool{}, fmt.Errorf("scenario %s takes no pool", scenario)
}

func (c *OIDCConfig) userPool(p OIDCPool, d OIDCDiscovery) (OIDCPool, error) {
	p.Flow = c.Get("USER_TOKENS")
	switch p.Flow {
	case "command":
		return p, nil
	case "password":
		user := []string{"--username", c.Get("USERNAME"), "--users", c.Get("USERS"), "--password-file", c.Get("PASSWORD_FILE")}
		secret := "USER_CLIENT_SECRET_FILE"
		if c.values[secret] == "" {
			secret = "CLIENT_SECRET_FILE"
		}
		return p, c.mintArgs(&p, d, c.clientArgs("USER_CLIENT", ""), append(user, scope(c.Get("USER_SCOPE"))...), "PASSWORD_FILE", secret)
	}
	return OIDCPool{}, errors.New("no user tokens: USER_TOKENS=none")
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
		{"userinfo_endpoint", c.Get("USERINFO_ENDPOINT")}, {"grant_types", c.Get("GRANT_TYPES")}} {
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
	case "command":
		return "command: " + c.Get("TOKEN_COMMAND")
	}
	return "none"
}
