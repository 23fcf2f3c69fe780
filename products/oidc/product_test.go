package oidc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/product"
)

const oidcBase = "NAME=oidc:t\nISSUER=http://127.0.0.1:9/\n"

func parseOIDC(t *testing.T, text string) (*OIDCConfig, error) {
	t.Helper()
	return ParseOIDCConfig(strings.NewReader(text), "/etc/idp/t.env", "/home/u")
}

func mustOIDC(t *testing.T, text string) *OIDCConfig {
	t.Helper()
	c, err := parseOIDC(t, text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOIDCConfigErrors: every bad file is refused naming the file (and the
// line, for a line that is not one) and the key.
func TestOIDCConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown key", oidcBase + "FOO=1\n", "/etc/idp/t.env:3: unknown key FOO"},
		{"not KEY=value", "NAME=a\nISSUER http://x\n", "/etc/idp/t.env:2: not a KEY=value line"},
		{"lower-case key", "# c\nname=a\n", "/etc/idp/t.env:2: not a KEY=value line"},
		{"old WARMUP_S", oidcBase + "WARMUP_S=3\n", "/etc/idp/t.env:3: WARMUP_S is no longer a setting"},
		{"deviation without why", oidcBase + "DEVIATION=a|b\n", `/etc/idp/t.env:3: want "what | why"`},
		{"config source without url", oidcBase + "CONFIG_SOURCE=a | \n", `/etc/idp/t.env:3: want "what | why" (or "what | url")`},
		{"setting without key", oidcBase + "SETTING==b\n", "/etc/idp/t.env:3: SETTING wants key=value"},
		{"no NAME", "ISSUER=http://x\n", "/etc/idp/t.env: NAME must be set (letters, digits, . _ : -)"},
		{"bad NAME", "NAME=a b\nISSUER=http://x\n", "/etc/idp/t.env: NAME must be set"},
		{"bad ISSUER", "NAME=a\nISSUER=ftp://x\n", "/etc/idp/t.env: ISSUER must be an http(s) URL"},
		{"bad CLIENT_AUTH", oidcBase + "CLIENT_AUTH=jwt\n", "/etc/idp/t.env: CLIENT_AUTH=jwt: want one of basic post"},
		{"bad USER_CLIENT_AUTH", oidcBase + "USER_CLIENT_AUTH=none\n", "USER_CLIENT_AUTH=none: want one of basic post"},
		{"bad USER_TOKENS", oidcBase + "USER_TOKENS=magic\n", "USER_TOKENS=magic: want one of password command none"},
		{"bad REFRESH_POOL_MODE", oidcBase + "REFRESH_POOL_MODE=rotate\n", "REFRESH_POOL_MODE=rotate: want one of chain consume reuse"},
		{"bad INTROSPECT_TOKENS", oidcBase + "INTROSPECT_TOKENS=all\n", "INTROSPECT_TOKENS=all: want one of client_credentials user"},
		{"bad INTROSPECT_AUTH", oidcBase + "INTROSPECT_AUTH=jwt\n", "INTROSPECT_AUTH=jwt: want one of basic post none"},
		{"bad number", oidcBase + "USERS=ten\n", "/etc/idp/t.env: USERS must be a whole number, got ten"},
		{"negative TTL", oidcBase + "ACCESS_TOKEN_TTL_S=-1\n", "ACCESS_TOKEN_TTL_S must be a whole number, got -1"},
		{"PG_DSN URL with password", oidcBase + "PG_DSN=postgres://u:pw@127.0.0.1/db\n", "/etc/idp/t.env: PG_DSN holds a password, which must not be in argv"},
		{"PG_DSN keywords with password", oidcBase + "PG_DSN=host=127.0.0.1 user=u password=pw\n", "PG_DSN holds a password"},
		{"command without TOKEN_COMMAND", oidcBase + "USER_TOKENS=command\n", "/etc/idp/t.env: USER_TOKENS=command needs TOKEN_COMMAND"},
		{"password without PASSWORD_FILE", oidcBase + "USER_TOKENS=password\n", "/etc/idp/t.env: USER_TOKENS=password needs PASSWORD_FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOIDC(t, tt.text)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) && !strings.Contains(err.Error(), ": "+tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestOIDCConfigValues: quotes, white space, comments, later lines, empty
// values, defaults, the keys that follow another, and paths.
func TestOIDCConfigValues(t *testing.T) {
	c := mustOIDC(t, "# a comment\n  NAME=oidc:first  \nNAME=\"oidc:t\"\nISSUER='http://127.0.0.1:9/'\n"+
		"CLIENT_ID=svc\nCLIENT_AUTH=post\nCLIENT_AUTH=\nCLIENT_SECRET_FILE=secrets/svc\nPASSWORD_FILE=~/pw\n"+
		"PIDFILE=/run/idp.pid\nNOTE=\"one\"\nNOTE=two\nSETTING=a=b=c\nDEVIATION=x | y | z\nUSER_TOKENS=password\n"+
		"TOKEN_COMMAND='unbalanced\"\nUSER_SCOPE=\"\"")
	for k, want := range map[string]string{
		"NAME": "oidc:t", "ISSUER": "http://127.0.0.1:9/", "CLIENT_AUTH": "basic", "USER_CLIENT_AUTH": "basic",
		"USER_CLIENT_ID": "svc", "CLIENT_SECRET_FILE": "/etc/idp/secrets/svc", "USER_CLIENT_SECRET_FILE": "/etc/idp/secrets/svc",
		"PASSWORD_FILE": "/home/u/pw", "PIDFILE": "/run/idp.pid", "VERSION": "unknown", "USERS": "1", "USERNAME": "user%d",
		"USER_SCOPE": "openid", "READY_TIMEOUT_S": "120", "REFRESH_POOL_MODE": "chain", "INTROSPECT_TOKENS": "client_credentials",
		"INTROSPECT_AUTH": "", "DISCOVERY_URL": "http://127.0.0.1:9/.well-known/openid-configuration",
		"READY_URL": "http://127.0.0.1:9/.well-known/openid-configuration", "TOKEN_COMMAND": `'unbalanced"`, "NOSUCH": "",
	} {
		if got := c.Get(k); got != want {
			t.Errorf("Get(%s) = %q, want %q", k, got, want)
		}
	}
	if !slices.Equal(c.Notes, []string{"one", "two"}) || !slices.Equal(c.Settings, []string{"a=b=c"}) ||
		!slices.Equal(c.Deviations, []string{"x | y | z"}) || c.Abs != "/etc/idp/t.env" || c.Dir != "/etc/idp" {
		t.Errorf("repeatables or file: %+v", c)
	}
	if got := c.UserTokens(); got != "password grant: user%d over 1 users, client svc, scope openid" {
		t.Errorf("UserTokens: %q", got)
	}
	env := c.Env()
	for _, l := range []string{"NAME=oidc:t\n", "CLIENT_SECRET_FILE=/etc/idp/secrets/svc\n", "CONFIG=/etc/idp/t.env\n",
		"CONFIG_DIR=/etc/idp\n", "IDP_PORT=9\n", "START_COMMAND=\n"} {
		if !strings.Contains(env, l) {
			t.Errorf("Env lacks %q:\n%s", l, env)
		}
	}
	if n := strings.Count(env, "\n"); n != len(OIDCKeys)+3 {
		t.Errorf("Env: %d lines, want %d", n, len(OIDCKeys)+3)
	}
}

// TestOIDCRelativeToTheFile: a relative file name resolves against the
// working directory, its values against the file's directory.
func TestOIDCRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("cfg", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("cfg/x.env", []byte(oidcBase+"CLIENT_SECRET_FILE=../s/c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadOIDCConfig("cfg/x.env", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if c.Abs != filepath.Join(dir, "cfg/x.env") || c.Get("CLIENT_SECRET_FILE") != filepath.Join(dir, "s/c") {
		t.Errorf("abs %q, secret %q", c.Abs, c.Get("CLIENT_SECRET_FILE"))
	}
	for _, name := range []string{"cfg", "nosuch.env"} {
		if _, err := ReadOIDCConfig(name, "/home/u"); err == nil || err.Error() != "no readable configuration file "+name+" (IDPBENCH_OIDC_CONFIG)" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOIDCLoopbackPort(t *testing.T) {
	for issuer, want := range map[string]string{
		"http://127.0.0.1:4444/": "4444", "http://localhost/": "80", "https://[::1]": "443",
		"https://localhost:8443/realms/x": "8443", "http://idp.example:80/": "", "http://localhostx/": "",
	} {
		c := mustOIDC(t, "NAME=a\nISSUER="+issuer+"\n")
		if got := c.loopbackPort(); got != want {
			t.Errorf("%s: %q, want %q", issuer, got, want)
		}
	}
}

func discoveryDoc(t *testing.T, s string) OIDCDiscovery {
	t.Helper()
	d, err := ParseOIDCDiscovery([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOIDCNA: the reasons follow the configuration and the discovery
// document, as the adapter's table in docs/design.md says.
func TestOIDCNA(t *testing.T) {
	full := `{"issuer":"i","token_endpoint":"http://t","introspection_endpoint":"http://i","userinfo_endpoint":"http://u",` +
		`"grant_types_supported":["authorization_code","refresh_token","client_credentials"]}`
	const disc = "http://127.0.0.1:9/.well-known/openid-configuration"
	users := "USER_TOKENS=command\nTOKEN_COMMAND=x\n"
	tests := []struct{ name, cfg, doc, scenario, want string }{
		{"discovery", "", "", "discovery", ""},
		{"static", "", full, "jwt_bearer", oidcStaticNA["jwt_bearer"]},
		{"unmapped", "", full, "client_credentials_login", "the generic adapter does not map scenario client_credentials_login"},
		{"no CLIENT_ID", "", full, "client_credentials", "no CLIENT_ID in t.env"},
		{"client_credentials", "CLIENT_ID=c\n", full, "client_credentials", ""},
		{"no document", "CLIENT_ID=c\n", "", "client_credentials", "no discovery document read (is the IdP up? " + disc + ")"},
		{"no grant list", "CLIENT_ID=c\n", `{"issuer":"i"}`, "client_credentials",
			`the discovery document has no grant_types_supported, so RFC 8414's default ["authorization_code","implicit"] applies: no client_credentials (set GRANT_TYPES to override)`},
		{"grant list without it", "CLIENT_ID=c\n", `{"grant_types_supported": ["authorization_code", "refresh_token"]}`, "client_credentials",
			`discovery grant_types_supported is ["authorization_code","refresh_token"]: no "client_credentials"`},
		{"GRANT_TYPES over discovery", "CLIENT_ID=c\nGRANT_TYPES=refresh_token\n", full, "client_credentials",
			"GRANT_TYPES in t.env (refresh_token) lacks client_credentials"},
		{"GRANT_TYPES has it", "CLIENT_ID=c\nGRANT_TYPES=client_credentials\n", "", "client_credentials", ""},
		{"no introspection endpoint", "CLIENT_ID=c\n", `{"grant_types_supported":["client_credentials"]}`, "introspect",
			"the discovery document (" + disc + ") has no introspection_endpoint, and INTROSPECTION_ENDPOINT is not set"},
		{"introspection override", "CLIENT_ID=c\nINTROSPECTION_ENDPOINT=http://o\n", `{"grant_types_supported":["client_credentials"]}`, "introspect", ""},
		{"introspect client N/A", "", full, "introspect",
			"its tokens come from client_credentials (INTROSPECT_TOKENS), which is N/A: no CLIENT_ID in t.env"},
		{"introspect user tokens", "INTROSPECT_TOKENS=user\n", full, "introspect", "no way to obtain user tokens is configured (USER_TOKENS=none)"},
		{"introspect user tokens had", "INTROSPECT_TOKENS=user\n" + users, full, "introspect", ""},
		{"refresh without users", "", full, "refresh", "no way to obtain user tokens is configured (USER_TOKENS=none)"},
		{"refresh not granted", users, `{"grant_types_supported":["client_credentials"]}`, "refresh",
			`discovery grant_types_supported is ["client_credentials"]: no "refresh_token"`},
		{"refresh", users, full, "refresh", ""},
		{"no userinfo endpoint", users, `{"token_endpoint":"http://t","userinfo_endpoint":7}`, "userinfo",
			"the discovery document (" + disc + ") has no userinfo_endpoint, and USERINFO_ENDPOINT is not set"},
		{"userinfo", users, full, "userinfo", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustOIDC(t, oidcBase+tt.cfg)
			var d OIDCDiscovery
			if tt.doc != "" {
				d = discoveryDoc(t, tt.doc)
			}
			if got := c.NA(tt.scenario, d); got != tt.want {
				t.Errorf("NA(%s) = %q\nwant %q", tt.scenario, got, tt.want)
			}
		})
	}
}

func TestOIDCDiscoveryIsAnObject(t *testing.T) {
	for _, s := range []string{"", "[]", "null", `"x"`, "{} {}", "{"} {
		if _, err := ParseOIDCDiscovery([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestOIDCEndpointAndArgs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"c.secret", "u.secret", "pw"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("s\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	text := oidcBase + "CLIENT_ID=c\nCLIENT_SECRET_FILE=c.secret\nCLIENT_SCOPE=api read\nUSER_TOKENS=password\nPASSWORD_FILE=pw\n" +
		"USER_CLIENT_ID=u\nUSER_CLIENT_SECRET_FILE=u.secret\nUSER_CLIENT_AUTH=post\nINTROSPECT_AUTH=none\nREFRESH_POOL_MODE=reuse\n" +
		"ACCESS_TOKEN_TTL_S=300\nMETRICS_URL=http://m\nMETRICS_SELECT_REFRESH=f{a=\"b\"}\nPG_DSN=postgres://u@h/db\n"
	c, err := ParseOIDCConfig(strings.NewReader(text), filepath.Join(dir, "t.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := discoveryDoc(t, `{"token_endpoint":"http://t"}`)
	if u, err := c.Endpoint("refresh", d); u != "http://t" || err != nil {
		t.Errorf("refresh: %q %v", u, err)
	}
	if _, err := c.Endpoint("userinfo", d); err == nil || !strings.HasPrefix(err.Error(), "no endpoint for userinfo (discovery document: http://127.0.0.1:9/") {
		t.Errorf("userinfo: %v", err)
	}
	sec := func(f string) string { return filepath.Join(dir, f) }
	for s, want := range map[string][]string{
		"discovery":          {"--product", "oidc:t"},
		"client_credentials": {"--product", "oidc:t", "--client-id", "c", "--client-secret-file", sec("c.secret"), "--client-auth", "basic", "--scope", "api read"},
		"introspect":         {"--product", "oidc:t", "--client-auth", "none", "--pool-mode", "reuse"},
		"refresh":            {"--product", "oidc:t", "--client-id", "u", "--client-secret-file", sec("u.secret"), "--client-auth", "post", "--pool-mode", "reuse"},
		"userinfo":           {"--product", "oidc:t", "--pool-mode", "reuse"},
	} {
		if got := c.LoadArgs(s); !slices.Equal(got, want) {
			t.Errorf("LoadArgs(%s) = %q", s, got)
		}
	}
	p, err := c.Pool("refresh", d)
	want := []string{"--flow", "password", "--token-url", "http://t", "--client-id", "u", "--client-secret-file", sec("u.secret"),
		"--client-auth", "post", "--username", "user%d", "--users", "1", "--password-file", sec("pw"), "--scope", "openid",
		"-P", "8", "--emit", "refresh_token", "--product", "oidc:t"}
	if err != nil || p.Kind != "refresh_token" || p.Mode != "reuse" || p.Flow != "password" || !slices.Equal(p.Args, want) {
		t.Errorf("Pool(refresh) = %+v, %v", p, err)
	}
	if p, err = c.Pool("introspect", d); err != nil || p.Flow != "client_credentials" || p.Mode != "reuse" || !slices.Contains(p.Args, "api read") {
		t.Errorf("Pool(introspect) = %+v, %v", p, err)
	}
	if _, err = c.Pool("introspect", nil); err == nil || !strings.HasPrefix(err.Error(), "no endpoint for client_credentials") {
		t.Errorf("Pool without a token endpoint: %v", err)
	}
	if _, err = c.Pool("discovery", d); err == nil || err.Error() != "scenario discovery takes no pool" {
		t.Errorf("Pool(discovery): %v", err)
	}
	if err := os.Remove(sec("pw")); err != nil {
		t.Fatal(err)
	}
	if _, err = c.Pool("userinfo", d); err == nil || !strings.Contains(err.Error(), "t.env: PASSWORD_FILE: no readable file "+sec("pw")) {
		t.Errorf("Pool without the password file: %v", err)
	}
	if got := c.MetricsArgs("refresh"); !slices.Equal(got, []string{"--server-metrics", "http://m", "--server-metrics-select", `f{a="b"}`,
		"--server-metrics-status-label", "status"}) || c.MetricsArgs("userinfo") != nil {
		t.Errorf("MetricsArgs: %q", got)
	}
	if c.TTL("userinfo") != "300" || c.TTL("refresh") != "" || c.TTL("discovery") != "" {
		t.Error("TTL")
	}
	if args, warn := c.SampleArgs("/s/pids/x.pid"); warn == "" || !slices.Equal(args, []string{"--host=true", "--postgres", "postgres://u@h/db"}) {
		t.Errorf("SampleArgs: %q %q", args, warn)
	}
}

func TestOIDCPoolOfCommandAndNone(t *testing.T) {
	c := mustOIDC(t, oidcBase+"USER_TOKENS=command\nTOKEN_COMMAND=x\nREFRESH_POOL_MODE=consume\n")
	if p, err := c.Pool("refresh", nil); err != nil || p.Kind != "refresh_token" || p.Mode != "consume" || p.Flow != "command" || p.Args != nil {
		t.Errorf("command: %+v %v", p, err)
	}
	c = mustOIDC(t, oidcBase)
	if _, err := c.Pool("userinfo", nil); err == nil || err.Error() != "no user tokens: USER_TOKENS=none" {
		t.Errorf("none: %v", err)
	}
	if args, warn := mustOIDC(t, oidcBase+"START_COMMAND=exec idp\nPIDFILE=/p\n").SampleArgs("/s/x.pid"); warn != "" ||
		!slices.Equal(args, []string{"--pidfile", "/s/x.pid", "--name", "oidc:t"}) {
		t.Errorf("SampleArgs with START_COMMAND: %q", args)
	}
}

func TestOIDCTokens(t *testing.T) {
	toks, err := ParseOIDCTokens(strings.NewReader("# header\n\na.b.c\n  \nd\n"))
	if err != nil || !slices.Equal(toks, []string{"a.b.c", "d"}) {
		t.Errorf("%q %v", toks, err)
	}
	for in, want := range map[string]string{
		"a b\n":      "TOKEN_COMMAND printed a line that is not one token (whitespace inside)",
		"# only\n\n": "TOKEN_COMMAND printed no token",
	} {
		if _, err := ParseOIDCTokens(strings.NewReader(in)); err == nil || err.Error() != want {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestOIDCMetaArgs: provision meta gets every param of Product() and the
// file's lines in order.
func TestOIDCMetaArgs(t *testing.T) {
	c := mustOIDC(t, oidcBase+"NOTE=n1\nDEVIATION=w | y\nCONFIG_SOURCE=s | https://x\nSETTING=k=v\nNOTE=n2\n")
	args := c.MetaArgs()
	in := product.Inputs{Params: map[string]string{}, Mode: product.ModeNative}
	var rest []string
	for i := 2; i < len(args); i += 2 {
		if args[i] == "--param" {
			k, v, _ := strings.Cut(args[i+1], "=")
			in.Params[k] = v
		} else {
			rest = append(rest, args[i], args[i+1])
		}
	}
	if err := Product().Check(in); err != nil || !slices.Equal(args[:2], []string{"--entry", "oidc"}) {
		t.Errorf("%v: %q", err, args)
	}
	if want := []string{"--note", "n1", "--note", "n2", "--deviation", "w | y", "--config-source", "s | https://x", "--setting", "k=v"}; !slices.Equal(rest, want) {
		t.Errorf("lines: %q", rest)
	}
	if in.P("config_file") != "/etc/idp/t.env" || in.P("user_tokens") != "none" || in.P("client_auth") != "basic" {
		t.Errorf("params: %v", in.Params)
	}
}

// TestOIDCMetaScenarioArgs: every scenario gets its N/A reason, else its
// endpoint, by the configuration and the discovery document.
func TestOIDCMetaScenarioArgs(t *testing.T) {
	c := mustOIDC(t, oidcBase+"CLIENT_ID=c\n")
	d, err := ParseOIDCDiscovery([]byte(`{"token_endpoint":"http://i/t","grant_types_supported":["client_credentials"]}`))
	if err != nil {
		t.Fatal(err)
	}
	args := c.MetaScenarioArgs(d)
	var got []string
	for i := 0; i+1 < len(args); i += 2 {
		name, _, _ := strings.Cut(args[i+1], "=")
		got = append(got, args[i]+" "+name)
	}
	want := []string{"--endpoint discovery", "--endpoint client_credentials", "--scenario-na client_credentials_login", "--scenario-na jwt_bearer",
		"--scenario-na introspect", "--scenario-na auth_code", "--scenario-na refresh", "--scenario-na userinfo"}
	if !slices.Equal(got, want) || !slices.Contains(args, "client_credentials=http://i/t") || !slices.Contains(args, "refresh="+c.NA("refresh", d)) {
		t.Errorf("%q", args)
	}
}
