package oidc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// loose is text read with its problems left aside: for what a value is
// (Get, Env), whatever the files it names.
func loose(t *testing.T, text string) *OIDCConfig {
	t.Helper()
	c, _, err := loadOIDC(strings.NewReader(text), "/etc/idp/t.env", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secrets writes each file 0600 in a new directory and returns it.
func secrets(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestOIDCConfigErrors: a bad file is refused naming the file, the line
// and the key, for each problem.
func TestOIDCConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown key", oidcBase + "FOO=1\n", "/etc/idp/t.env:3: unknown key FOO"},
		{"not KEY=value", "NAME=a\nISSUER http://x\n", "/etc/idp/t.env:2: not a KEY=value line"},
		{"lower-case key", "# c\nname=a\n", "/etc/idp/t.env:2: not a KEY=value line"},
		{"old WARMUP_S", oidcBase + "WARMUP_S=3\n", "/etc/idp/t.env:3: WARMUP_S is no longer a setting"},
		{"deviation without why", oidcBase + "DEVIATION=a|b\n", `/etc/idp/t.env:3: DEVIATION=a|b: want "what | why"`},
		{"config source without url", oidcBase + "CONFIG_SOURCE=a | \n", `/etc/idp/t.env:3: CONFIG_SOURCE=a |: want "what | why" (or "what | url")`},
		{"setting without key", oidcBase + "SETTING==b\n", "/etc/idp/t.env:3: SETTING wants key=value"},
		{"login field without =", oidcBase + "LOGIN_FIELD=tenant\n", "/etc/idp/t.env:3: LOGIN_FIELD=tenant: want name=value"},
		{"no NAME", "ISSUER=http://127.0.0.1/\n", "/etc/idp/t.env: NAME is not set (required)"},
		{"empty NAME", "NAME=\nISSUER=http://127.0.0.1/\n", "/etc/idp/t.env:1: NAME is not set (required)"},
		{"bad NAME", "NAME=my idp\nISSUER=http://127.0.0.1/\n", "/etc/idp/t.env:1: NAME=my idp: only letters, digits and . _ : - (no spaces)"},
		{"bad ISSUER", "NAME=a\nISSUER=ftp://x\n", "/etc/idp/t.env:2: ISSUER=ftp://x: want an http(s) URL"},
		{"ISSUER not on loopback", "NAME=a\nISSUER=https://idp.example.com/\n",
			"/etc/idp/t.env:2: ISSUER=https://idp.example.com/: idp.example.com is not on loopback (127.0.0.0/8, [::1] or localhost): every IdP is measured"},
		{"ISSUER on another address", "NAME=a\nISSUER=http://10.0.0.1:8080/\n", "10.0.0.1 is not on loopback"},
		{"METRICS_URL not on loopback", oidcBase + "METRICS_URL=http://metrics.internal/m\n", "/etc/idp/t.env:3: METRICS_URL=http://metrics.internal/m: metrics.internal is not on loopback"},
		{"relative REDIRECT_URI", oidcBase + "REDIRECT_URI=/cb\n", "/etc/idp/t.env:3: REDIRECT_URI=/cb: want an absolute http(s) URL"},
		{"bad CLIENT_AUTH", oidcBase + "CLIENT_AUTH=jwt\n", "/etc/idp/t.env:3: CLIENT_AUTH=jwt: want one of basic post"},
		{"bad USER_CLIENT_AUTH", oidcBase + "USER_CLIENT_AUTH=none\n", "USER_CLIENT_AUTH=none: want one of basic post"},
		{"bad USER_TOKENS", oidcBase + "USER_TOKENS=magic\n", "USER_TOKENS=magic: want one of password login command none"},
		{"bad LOGIN", oidcBase + "LOGIN=saml\n", "/etc/idp/t.env:3: LOGIN=saml: want one of form form-page admin-accept none"},
		{"bad CLIENT_USERINFO", oidcBase + "CLIENT_USERINFO=true\n", "CLIENT_USERINFO=true: want one of yes no"},
		{"bad REFRESH_POOL_MODE", oidcBase + "REFRESH_POOL_MODE=rotate\n", "REFRESH_POOL_MODE=rotate: want one of chain consume reuse"},
		{"bad INTROSPECT_TOKENS", oidcBase + "INTROSPECT_TOKENS=all\n", "INTROSPECT_TOKENS=all: want one of client_credentials user"},
		{"bad INTROSPECT_AUTH", oidcBase + "INTROSPECT_AUTH=jwt\n", "INTROSPECT_AUTH=jwt: want one of basic post none"},
		{"bad number", oidcBase + "USERS=ten\n", "/etc/idp/t.env:3: USERS=ten: want a whole number"},
		{"negative TTL", oidcBase + "ACCESS_TOKEN_TTL_S=-1\n", "ACCESS_TOKEN_TTL_S=-1: want a whole number"},
		{"PG_DSN URL with password", oidcBase + "PG_DSN=postgres://u:pw@127.0.0.1/db\n", "/etc/idp/t.env:3: PG_DSN holds a password, which must not be in argv"},
		{"PG_DSN keywords with password", oidcBase + "PG_DSN=host=127.0.0.1 user=u password=pw\n", "PG_DSN holds a password"},
		{"command without TOKEN_COMMAND", oidcBase + "USER_TOKENS=command\n", "/etc/idp/t.env:3: USER_TOKENS=command needs TOKEN_COMMAND"},
		{"password without PASSWORD_FILE", oidcBase + "CLIENT_ID=c\nUSER_TOKENS=password\n", "/etc/idp/t.env:4: USER_TOKENS=password needs PASSWORD_FILE"},
		{"login tokens without LOGIN", oidcBase + "USER_TOKENS=login\n", "/etc/idp/t.env:3: USER_TOKENS=login needs LOGIN"},
		{"missing secret file", oidcBase + "CLIENT_ID=c\nCLIENT_SECRET_FILE=nosuch.secret\n",
			"/etc/idp/t.env:4: CLIENT_SECRET_FILE: no such file /etc/idp/nosuch.secret"},
		{"CLIENT_ID without its secret", oidcBase + "CLIENT_ID=c\n", "/etc/idp/t.env:3: CLIENT_ID needs CLIENT_SECRET_FILE"},
		{"LOGIN without REDIRECT_URI", oidcBase + "LOGIN=form\n", "/etc/idp/t.env:3: LOGIN=form needs REDIRECT_URI"},
		{"form LOGIN without PASSWORD_FILE", oidcBase + "LOGIN=form-page\n", "/etc/idp/t.env:3: LOGIN=form-page needs PASSWORD_FILE"},
		{"admin-accept without its admin URL", oidcBase + "LOGIN=admin-accept\n", "/etc/idp/t.env:3: LOGIN=admin-accept needs LOGIN_ADMIN_URL"},
		{"form keys without a form", oidcBase + "LOGIN_USER_FIELD=email\n", "/etc/idp/t.env:3: LOGIN_USER_FIELD is for LOGIN=form or form-page (LOGIN is none)"},
		{"jwt keys without the key", oidcBase + "JWT_BEARER_KID=k1\n", "/etc/idp/t.env:3: JWT_BEARER_KID without JWT_BEARER_KEY_FILE"},
		{"S2l without a client", oidcBase + "CLIENT_USERINFO=yes\n", "/etc/idp/t.env:3: CLIENT_USERINFO=yes needs CLIENT_ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOIDC(t, tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if _, ok := err.(*OIDCProblems); !ok {
				t.Errorf("error %T, want *OIDCProblems", err)
			}
		})
	}
}

// TestOIDCEveryProblem: a file with several mistakes gets every one, each
// at its line, in line order; a credential file open to others is one.
func TestOIDCEveryProblem(t *testing.T) {
	dir := secrets(t, "ok.secret")
	if err := os.WriteFile(filepath.Join(dir, "open.secret"), []byte("s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "# my IdP\nNAME=my idp\nISSUER=https://idp.example.com/\nCLIENT_ID=svc\nCLIENT_SECRET_FILE=open.secret\n" +
		"CLIENT_AUTH=jwt\nSECRET=x\nUSER_TOKENS=password\nPASSWORD_FILE=missing.pw\nUSER_CLIENT_SECRET_FILE=ok.secret\n"
	_, probs, err := loadOIDC(strings.NewReader(text), filepath.Join(dir, "my.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "my.env")
	want := []string{
		f + ":2: NAME=my idp: only letters, digits and . _ : - (no spaces)",
		f + ":3: ISSUER=https://idp.example.com/: idp.example.com is not on loopback",
		f + ":5: CLIENT_SECRET_FILE: " + filepath.Join(dir, "open.secret") + " is mode 0644, open to group or others: a credential file is 0600",
		f + ":6: CLIENT_AUTH=jwt: want one of basic post",
		f + ":7: unknown key SECRET",
		f + ":9: PASSWORD_FILE: no such file " + filepath.Join(dir, "missing.pw"),
	}
	got := probs.Lines()
	if len(got) != len(want) || probs.Runtime() {
		t.Fatalf("%d problems (runtime %v), want %d:\n%s", len(got), probs.Runtime(), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %q\nwant %q...", i, got[i], want[i])
		}
	}
}

// TestOIDCConfigValues: quotes, white space, comments, later lines, empty
// values, defaults, the keys that follow another, and paths.
func TestOIDCConfigValues(t *testing.T) {
	c := loose(t, "# a comment\n  NAME=oidc:first  \nNAME=\"oidc:t\"\nISSUER='http://127.0.0.1:9/'\n"+
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
	if n := strings.Count(env, "\n"); n != len(OIDCKeys)+3 || len(OIDCKeys) < 50 {
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
	c, probs, err := LoadOIDCConfig("cfg/x.env", "/home/u")
	if err != nil || len(probs.List) != 1 || !strings.HasPrefix(probs.Error(), "cfg/x.env:3: CLIENT_SECRET_FILE: no such file "+filepath.Join(dir, "s/c")) {
		t.Fatalf("%v %v", probs, err)
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
		c := loose(t, "NAME=a\nISSUER="+issuer+"\n")
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
// document, as docs/design-reference.md says (Generic oidc adapter).
func TestOIDCNA(t *testing.T) {
	full := `{"issuer":"i","token_endpoint":"http://127.0.0.1:9/t","introspection_endpoint":"http://127.0.0.1:9/i",` +
		`"userinfo_endpoint":"http://127.0.0.1:9/u","authorization_endpoint":"http://127.0.0.1:9/a",` +
		`"grant_types_supported":["authorization_code","refresh_token","client_credentials","urn:ietf:params:oauth:grant-type:jwt-bearer"]}`
	const disc = "http://127.0.0.1:9/.well-known/openid-configuration"
	users := "USER_TOKENS=command\nTOKEN_COMMAND=x\n"
	login := "LOGIN=form\nCLIENT_ID=c\nREDIRECT_URI=http://127.0.0.1/cb\n"
	tests := []struct{ name, cfg, doc, scenario, want string }{
		{"discovery", "", "", "discovery", ""},
		{"unmapped", "", full, "request", "the generic adapter does not map scenario request"},
		{"no CLIENT_ID", "", full, "client_credentials", "no CLIENT_ID in t.env"},
		{"client_credentials", "CLIENT_ID=c\n", full, "client_credentials", ""},
		{"no document", "CLIENT_ID=c\n", "", "client_credentials",
			"no discovery document read (is the IdP up? " + disc + "), and TOKEN_ENDPOINT is not set"},
		{"no document, token endpoint set", "CLIENT_ID=c\nTOKEN_ENDPOINT=http://127.0.0.1:9/t\n", "", "client_credentials",
			"no discovery document read (is the IdP up? " + disc + ")"},
		{"token endpoint off loopback", "CLIENT_ID=c\n", `{"token_endpoint":"https://idp.example/t"}`, "client_credentials",
			"the discovery document's token_endpoint https://idp.example/t: idp.example is not on loopback"},
		{"no grant list", "CLIENT_ID=c\n", `{"token_endpoint":"http://127.0.0.1:9/t"}`, "client_credentials",
			`the discovery document has no grant_types_supported, so RFC 8414's default ["authorization_code","implicit"] applies: no client_credentials (set GRANT_TYPES to override)`},
		{"grant list without it", "CLIENT_ID=c\n", `{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported": ["authorization_code", "refresh_token"]}`, "client_credentials",
			`discovery grant_types_supported is ["authorization_code","refresh_token"]: no "client_credentials"`},
		{"GRANT_TYPES over discovery", "CLIENT_ID=c\nGRANT_TYPES=refresh_token\n", full, "client_credentials",
			"GRANT_TYPES in t.env (refresh_token) lacks client_credentials"},
		{"GRANT_TYPES has it", "CLIENT_ID=c\nGRANT_TYPES=client_credentials\nTOKEN_ENDPOINT=http://127.0.0.1:9/t\n", "", "client_credentials", ""},
		{"S2l without CLIENT_USERINFO", "CLIENT_ID=c\n", full, "client_credentials_login",
			"CLIENT_USERINFO is not yes in t.env: S2l calls userinfo with the client's own client_credentials token"},
		{"S2l", "CLIENT_ID=c\nCLIENT_USERINFO=yes\n", full, "client_credentials_login", ""},
		{"S2l without a client", "CLIENT_USERINFO=yes\n", full, "client_credentials_login",
			"its token comes from client_credentials, which is N/A: no CLIENT_ID in t.env"},
		{"S2l without userinfo", "CLIENT_ID=c\nCLIENT_USERINFO=yes\n", `{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported":["client_credentials"]}`,
			"client_credentials_login", "the discovery document (" + disc + ") has no userinfo_endpoint, and USERINFO_ENDPOINT is not set"},
		{"S2j without a key", "", full, "jwt_bearer", "no JWT_BEARER_KEY_FILE in t.env: S2j signs RFC 7523 assertions with a key the IdP trusts"},
		{"S2j", "JWT_BEARER_KEY_FILE=k.pem\n", full, "jwt_bearer", ""},
		{"S2j not granted", "JWT_BEARER_KEY_FILE=k.pem\n", `{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported":["client_credentials"]}`,
			"jwt_bearer", `discovery grant_types_supported is ["client_credentials"]: no "urn:ietf:params:oauth:grant-type:jwt-bearer"`},
		{"S4 without LOGIN", "", full, "auth_code", "no LOGIN in t.env: S4 logs users in through a login protocol (LOGIN=form, form-page or admin-accept)"},
		{"S4", login, full, "auth_code", ""},
		{"S4 with RFC 8414's default grants", login, `{"token_endpoint":"http://127.0.0.1:9/t","authorization_endpoint":"http://127.0.0.1:9/a"}`, "auth_code", ""},
		{"S4 without an authorization endpoint", login, `{"token_endpoint":"http://127.0.0.1:9/t"}`, "auth_code",
			"the discovery document (" + disc + ") has no authorization_endpoint, and AUTHORIZATION_ENDPOINT is not set"},
		{"S4 not granted", login, `{"token_endpoint":"http://127.0.0.1:9/t","authorization_endpoint":"http://127.0.0.1:9/a","grant_types_supported":["client_credentials"]}`,
			"auth_code", `discovery grant_types_supported is ["client_credentials"]: no "authorization_code"`},
		{"no introspection endpoint", "CLIENT_ID=c\n", `{"grant_types_supported":["client_credentials"]}`, "introspect",
			"the discovery document (" + disc + ") has no introspection_endpoint, and INTROSPECTION_ENDPOINT is not set"},
		{"introspection override", "CLIENT_ID=c\nINTROSPECTION_ENDPOINT=http://127.0.0.1:9/o\n",
			`{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported":["client_credentials"]}`, "introspect", ""},
		{"introspect client N/A", "", full, "introspect",
			"its tokens come from client_credentials (INTROSPECT_TOKENS), which is N/A: no CLIENT_ID in t.env"},
		{"introspect user tokens", "INTROSPECT_TOKENS=user\n", full, "introspect", "no way to obtain user tokens is configured (USER_TOKENS=none)"},
		{"introspect user tokens had", "INTROSPECT_TOKENS=user\n" + users, full, "introspect", ""},
		{"refresh without users", "", full, "refresh", "no way to obtain user tokens is configured (USER_TOKENS=none)"},
		{"refresh not granted", users, `{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported":["client_credentials"]}`, "refresh",
			`discovery grant_types_supported is ["client_credentials"]: no "refresh_token"`},
		{"refresh", users, full, "refresh", ""},
		{"no userinfo endpoint", users, `{"token_endpoint":"http://127.0.0.1:9/t","userinfo_endpoint":7}`, "userinfo",
			"the discovery document (" + disc + ") has no userinfo_endpoint, and USERINFO_ENDPOINT is not set"},
		{"userinfo", users, full, "userinfo", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loose(t, oidcBase+tt.cfg)
			var d OIDCDiscovery
			if tt.doc != "" {
				d = discoveryDoc(t, tt.doc)
			}
			if got := c.NA(tt.scenario, d); got != tt.want && (tt.want == "" || !strings.HasPrefix(got, tt.want)) {
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
		"ACCESS_TOKEN_TTL_S=300\nMETRICS_URL=http://127.0.0.1:9/m\nMETRICS_SELECT_REFRESH=f{a=\"b\"}\nPG_DSN=postgres://u@h/db\n"
	c, err := ParseOIDCConfig(strings.NewReader(text), filepath.Join(dir, "t.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := discoveryDoc(t, `{"token_endpoint":"http://127.0.0.1:9/t","userinfo_endpoint":"http://127.0.0.1:9/u"}`)
	if u, err := c.Endpoint("refresh", d); u != "http://127.0.0.1:9/t" || err != nil {
		t.Errorf("refresh: %q %v", u, err)
	}
	if _, err := c.Endpoint("introspect", d); err == nil || !strings.HasPrefix(err.Error(), "no endpoint for introspect (discovery document: http://127.0.0.1:9/") {
		t.Errorf("introspect: %v", err)
	}
	sec := func(f string) string { return filepath.Join(dir, f) }
	for s, want := range map[string][]string{
		"discovery":          {"--product", "oidc:t"},
		"client_credentials": {"--product", "oidc:t", "--client-id", "c", "--client-secret-file", sec("c.secret"), "--client-auth", "basic", "--scope", "api read"},
		"introspect":         {"--product", "oidc:t", "--client-auth", "none", "--pool-mode", "reuse"},
		"refresh":            {"--product", "oidc:t", "--client-id", "u", "--client-secret-file", sec("u.secret"), "--client-auth", "post", "--pool-mode", "reuse"},
		"userinfo":           {"--product", "oidc:t", "--pool-mode", "reuse"},
	} {
		if got := c.LoadArgs(s, d); !slices.Equal(got, want) {
			t.Errorf("LoadArgs(%s) = %q", s, got)
		}
	}
	p, err := c.Pool("refresh", d)
	want := []string{"--flow", "password", "--token-url", "http://127.0.0.1:9/t", "--client-id", "u", "--client-secret-file", sec("u.secret"),
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
	if got := c.MetricsArgs("refresh"); !slices.Equal(got, []string{"--server-metrics", "http://127.0.0.1:9/m", "--server-metrics-select", `f{a="b"}`,
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
	c := loose(t, oidcBase+"CLIENT_ID=c\n")
	d, err := ParseOIDCDiscovery([]byte(`{"token_endpoint":"http://127.0.0.1:9/t","grant_types_supported":["client_credentials"]}`))
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
	if !slices.Equal(got, want) || !slices.Contains(args, "client_credentials=http://127.0.0.1:9/t") || !slices.Contains(args, "refresh="+c.NA("refresh", d)) {
		t.Errorf("%q", args)
	}
}

// TestOIDCNewScenarioArgs: S4's, S2l's and S2j's loadstep arguments and
// pools, and user tokens through the login, from the file alone.
func TestOIDCNewScenarioArgs(t *testing.T) {
	dir := secrets(t, "c.secret", "web.secret", "pw", "k.pem")
	sec := func(f string) string { return filepath.Join(dir, f) }
	text := oidcBase + "CLIENT_ID=c\nCLIENT_SECRET_FILE=c.secret\nCLIENT_USERINFO=yes\nUSER_CLIENT_ID=web\nUSER_CLIENT_SECRET_FILE=web.secret\n" +
		"USERNAME=u%d\nUSERS=5\nPASSWORD_FILE=pw\nUSER_SCOPE=openid offline_access\nUSER_TOKENS=login\nLOGIN=form-page\n" +
		"REDIRECT_URI=http://127.0.0.1/cb\nLOGIN_SCOPE=openid\nLOGIN_PASSWORD_FIELD=pin\nLOGIN_FIELD=tenant=acme\n" +
		"JWT_BEARER_KEY_FILE=k.pem\nJWT_BEARER_KID=key1\nJWT_BEARER_ISS=service\nJWT_BEARER_SCOPE=openid\nJWT_BEARER_TTL_S=600\n"
	c, err := ParseOIDCConfig(strings.NewReader(text), filepath.Join(dir, "t.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := discoveryDoc(t, `{"token_endpoint":"http://127.0.0.1:9/t","userinfo_endpoint":"http://127.0.0.1:9/u",`+
		`"authorization_endpoint":"http://127.0.0.1:9/a"}`)
	if u, err := c.Endpoint("auth_code", d); u != "http://127.0.0.1:9/a" || err != nil {
		t.Errorf("auth_code endpoint %q %v", u, err)
	}
	login := []string{"--client-id", "web", "--client-secret-file", sec("web.secret"), "--client-auth", "basic", "--redirect-uri", "http://127.0.0.1/cb",
		"--username", "u%d", "--users", "5", "--password-file", sec("pw"), "--login-consent", "--login-password-field", "pin", "--login-field", "tenant=acme"}
	for s, want := range map[string][]string{
		"auth_code": slices.Concat([]string{"--product", "oidc:t", "--login", "form-page", "--token-url", "http://127.0.0.1:9/t"}, login,
			[]string{"--scope", "openid"}),
		"client_credentials_login": {"--product", "oidc:t", "--client-id", "c", "--client-secret-file", sec("c.secret"), "--client-auth", "basic",
			"--userinfo-url", "http://127.0.0.1:9/u"},
		"jwt_bearer": {"--product", "oidc:t", "--client-auth", "none", "--scope", "openid", "--pool-mode", "reuse"},
	} {
		if got := c.LoadArgs(s, d); !slices.Equal(got, want) {
			t.Errorf("LoadArgs(%s) = %q\nwant %q", s, got, want)
		}
	}
	p, err := c.Pool("jwt_bearer", d)
	want := []string{"--flow", "jwt-bearer", "--token-url", "http://127.0.0.1:9/t", "--key-file", sec("k.pem"), "--aud", "http://127.0.0.1:9/",
		"--ttl", "600s", "--kid", "key1", "--iss", "service", "--sub", "service", "-P", "8", "--product", "oidc:t"}
	if err != nil || p.Kind != "assertion" || p.Mode != "reuse" || p.Flow != "jwt-bearer" || !slices.Equal(p.Args, want) || c.TTL("jwt_bearer") != "600" {
		t.Errorf("Pool(jwt_bearer) = %+v, %v", p, err)
	}
	p, err = c.Pool("refresh", d)
	want = slices.Concat([]string{"--flow", "form-page", "--token-url", "http://127.0.0.1:9/t", "--auth-url", "http://127.0.0.1:9/a"}, login,
		[]string{"--scope", "openid offline_access", "-P", "8", "--emit", "refresh_token", "--product", "oidc:t"})
	if err != nil || p.Flow != "form-page" || p.Kind != "refresh_token" || !slices.Equal(p.Args, want) {
		t.Errorf("Pool(refresh) through the login = %+v, %v\nwant args %q", p, err, want)
	}
	for _, s := range []string{"auth_code", "client_credentials_login", "jwt_bearer", "refresh", "userinfo"} {
		if why := c.NA(s, discoveryDoc(t, `{"token_endpoint":"http://127.0.0.1:9/t","userinfo_endpoint":"http://127.0.0.1:9/u",`+
			`"authorization_endpoint":"http://127.0.0.1:9/a","grant_types_supported":["authorization_code","refresh_token",`+
			`"client_credentials","urn:ietf:params:oauth:grant-type:jwt-bearer"]}`)); why != "" {
			t.Errorf("NA(%s) = %q", s, why)
		}
	}
}

// TestOIDCAdminAcceptLogin: Hydra's login through the generic adapter:
// subjects, the admin API, no password or form option.
func TestOIDCAdminAcceptLogin(t *testing.T) {
	dir := secrets(t, "c.secret")
	text := oidcBase + "CLIENT_ID=c\nCLIENT_SECRET_FILE=c.secret\nLOGIN=admin-accept\nLOGIN_ADMIN_URL=http://127.0.0.1:4445\n" +
		"REDIRECT_URI=http://127.0.0.1/cb\nUSERS=100\nUSER_TOKENS=login\nUSER_SCOPE=openid offline_access\n"
	c, err := ParseOIDCConfig(strings.NewReader(text), filepath.Join(dir, "t.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := discoveryDoc(t, `{"token_endpoint":"http://127.0.0.1:9/t","authorization_endpoint":"http://127.0.0.1:9/a"}`)
	want := []string{"--product", "oidc:t", "--login", "admin-accept", "--token-url", "http://127.0.0.1:9/t", "--client-id", "c",
		"--client-secret-file", filepath.Join(dir, "c.secret"), "--client-auth", "basic", "--redirect-uri", "http://127.0.0.1/cb",
		"--admin-url", "http://127.0.0.1:4445", "--username", "user%d", "--users", "100", "--scope", "openid offline_access"}
	if got := c.LoadArgs("auth_code", d); !slices.Equal(got, want) {
		t.Errorf("LoadArgs(auth_code) = %q\nwant %q", got, want)
	}
	if p, err := c.Pool("userinfo", d); err != nil || p.Flow != "admin-accept" || !slices.Contains(p.Args, "--subject") || slices.Contains(p.Args, "--password-file") {
		t.Errorf("Pool(userinfo) = %+v, %v", p, err)
	}
}

// TestOIDCPlan: every scenario, run with how or N/A with why, in the
// report's order.
func TestOIDCPlan(t *testing.T) {
	dir := secrets(t, "c.secret", "pw")
	text := oidcBase + "CLIENT_ID=c\nCLIENT_SECRET_FILE=c.secret\nUSER_TOKENS=password\nPASSWORD_FILE=pw\nUSERS=20\n" +
		"LOGIN=form\nREDIRECT_URI=http://127.0.0.1/cb\n"
	c, err := ParseOIDCConfig(strings.NewReader(text), filepath.Join(dir, "t.env"), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := discoveryDoc(t, `{"token_endpoint":"http://127.0.0.1:9/t","userinfo_endpoint":"http://127.0.0.1:9/u",`+
		`"authorization_endpoint":"http://127.0.0.1:9/a","grant_types_supported":["authorization_code","refresh_token","client_credentials"]}`)
	rows := c.Plan(d)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %s %s", r.ID, r.Scenario, r.Status))
	}
	want := []string{"S1 discovery run", "S2 client_credentials run", "S2l client_credentials_login N/A", "S2j jwt_bearer N/A",
		"S3 introspect N/A", "S4 auth_code run", "S5 refresh run", "S6 userinfo run"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan %q\nwant %q", got, want)
	}
	text = PlanText(c, rows, "discovery document http://127.0.0.1:9/.well-known/openid-configuration")
	for _, line := range []string{
		"plan for oidc:t (" + filepath.Join(dir, "t.env") + "), discovery document http://127.0.0.1:9/.well-known/openid-configuration:\n",
		"  S2   client_credentials        run   POST http://127.0.0.1:9/t, grant client_credentials, client c (basic)\n",
		"  S2l  client_credentials_login  N/A   CLIENT_USERINFO is not yes in t.env",
		"  S3   introspect                N/A   the discovery document (http://127.0.0.1:9/.well-known/openid-configuration) has no introspection_endpoint",
		"  S4   auth_code                 run   login form at http://127.0.0.1:9/a: user%d over 20 users (the page's own user name and password inputs), " +
			"a consent form answered where shown, scope openid; the code exchanged at http://127.0.0.1:9/t, client c (basic)\n",
		"  S5   refresh                   run   POST http://127.0.0.1:9/t, grant refresh_token, client c (basic); refresh tokens: password grant: user%d over 20 users",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("plan lacks %q:\n%s", line, text)
		}
	}
}

// TestOIDCTemplate: examples/oidc/myidp.env is the template: every key of
// the file (the repeatable ones too) once, in OIDCKeys' order, a key with a
// default shown at it, the required ones set and marked; as shipped it
// parses without a problem.
func TestOIDCTemplate(t *testing.T) {
	const name = "../../examples/oidc/myidp.env"
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`^(# )?([A-Z][A-Z0-9_]*)=(.*)$`)
	var order []string
	seen := map[string]bool{}
	prev := ""
	for _, line := range strings.Split(string(b), "\n") {
		m := key.FindStringSubmatch(line)
		if m == nil {
			prev = line
			continue
		}
		k, commented, v := m[2], m[1] != "", m[3]
		repeatable := slices.Contains([]string{oidcNote, oidcDeviation, oidcConfigSource, oidcSetting, oidcLoginField}, k)
		switch def := oidcKey(k); {
		case def == nil && !repeatable:
			t.Errorf("template: %s is no key", k)
		case def != nil && def.Required && (commented || !strings.HasPrefix(prev, "# (required)")):
			t.Errorf("template: required %s must be set, after a line starting \"# (required)\"", k)
		case def != nil && !def.Required && !commented && k != "VERSION":
			t.Errorf("template: %s is set; only the required keys are", k)
		case def != nil && def.Default != "" && v != def.Default:
			t.Errorf("template: %s=%s, its default is %s", k, v, def.Default)
		}
		if seen[k] && !strings.HasPrefix(k, "METRICS_SELECT") && !repeatable {
			t.Errorf("template: %s twice", k)
		}
		if !seen[k] && !repeatable {
			order = append(order, k)
		}
		seen[k] = true
		prev = line
	}
	var want []string
	for _, k := range OIDCKeys {
		want = append(want, k.Name)
	}
	if !slices.Equal(order, want) {
		t.Errorf("template's keys, in order:\n%q\nOIDCKeys:\n%q", order, want)
	}
	for _, k := range []string{oidcNote, oidcDeviation, oidcConfigSource, oidcSetting, oidcLoginField} {
		if !seen[k] {
			t.Errorf("template lacks %s", k)
		}
	}
	if _, err := ReadOIDCConfig(name, "/home/u"); err != nil {
		t.Errorf("the template as shipped: %v", err)
	}
}

// TestOIDCExamples: each shipped configuration is good but for the
// credential files it names, which live on the user's machine.
func TestOIDCExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/oidc/*.env")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		c, probs, err := LoadOIDCConfig(f, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs.List {
			if !strings.Contains(p.Msg, ": no such file ") {
				t.Errorf("%s:%d: %s", f, p.Line, p.Msg)
			}
		}
		if c.Get("NAME") == "" || c.Get("ISSUER") == "" {
			t.Errorf("%s: no NAME or ISSUER", f)
		}
	}
}

// TestOIDCPlanBeforeUp: without a discovery document (START_COMMAND is to
// start the IdP) the file alone rules out what it can; the rest waits for
// the document, the plan naming what it must have.
func TestOIDCPlanBeforeUp(t *testing.T) {
	c := loose(t, oidcBase+"CLIENT_ID=c\nTOKEN_ENDPOINT=http://127.0.0.1:9/t\nSTART_COMMAND=exec idp\nUSER_TOKENS=command\nTOKEN_COMMAND=x\n")
	var got []string
	for _, r := range c.Plan(nil) {
		got = append(got, r.ID+" "+r.Status+" "+r.Detail)
	}
	want := []string{
		"S1 run GET http://127.0.0.1:9/.well-known/openid-configuration",
		"S2 at up runs if the discovery document has client_credentials in grant_types_supported",
		"S2l N/A CLIENT_USERINFO is not yes in t.env",
		"S2j N/A no JWT_BEARER_KEY_FILE in t.env",
		"S3 at up runs if the discovery document has introspection_endpoint, client_credentials in grant_types_supported",
		"S4 N/A no LOGIN in t.env",
		"S5 at up runs if the discovery document has refresh_token in grant_types_supported",
		"S6 at up runs if the discovery document has userinfo_endpoint",
	}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("plan row %d: %q\nwant %q...", i, got[min(i, len(got)-1)], want[i])
		}
	}
}
