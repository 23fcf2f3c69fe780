package oidc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
)

// LoopbackWhy is why every URL the tools send requests to is on loopback,
// as a problem and docs/own-idp.md give it.
const LoopbackWhy = "every IdP is measured on this machine over loopback, so that no network adds its " +
	"latency and variance to one IdP's numbers, and the load (and its secrets) never leaves the machine"

// check adds every problem of the values to p: each key's, then what one
// key needs of another.
func (c *OIDCConfig) check(p *OIDCProblems) {
	for _, k := range OIDCKeys {
		c.checkKey(p, k)
	}
	c.checkNeeds(p)
}

// checkKey adds the problem of k's value, if any.
func (c *OIDCConfig) checkKey(p *OIDCProblems, k OIDCKey) {
	v, n := c.values[k.Name], c.lines[k.Name]
	if v == "" {
		if k.Required {
			p.add(n, "%s is not set (required): %s", k.Name, k.Doc)
		}
		return
	}
	switch {
	case k.OneOf != nil && !slices.Contains(k.OneOf, v):
		p.add(n, "%s=%s: want one of %s", k.Name, v, strings.Join(k.OneOf, " "))
	case k.Kind == oidcNumber && !oidcCount.MatchString(v):
		p.add(n, "%s=%s: want a whole number", k.Name, v)
	case k.Kind == oidcName && !oidcNameV.MatchString(v):
		p.add(n, "%s=%s: only letters, digits and . _ : - (no spaces)", k.Name, v)
	case k.Kind == oidcURL:
		if why := loopbackURL(v); why != "" {
			p.add(n, "%s=%s: %s", k.Name, v, why)
		}
	case k.Kind == oidcAbsURL:
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(n, "%s=%s: want an absolute http(s) URL", k.Name, v)
		}
	case k.Kind == oidcSecret:
		if why := secretFile(c.Get(k.Name)); why != "" {
			p.add(n, "%s: %s", k.Name, why)
		}
	}
}

// checkNeeds adds what one key needs of another: a line names the key
// that needs it.
func (c *OIDCConfig) checkNeeds(p *OIDCProblems) {
	need := func(cond bool, line int, format string, a ...any) {
		if cond {
			p.add(line, format, a...)
		}
	}
	tokens, tokensLine := c.Get("USER_TOKENS"), c.lines["USER_TOKENS"]
	need(c.set("CLIENT_ID") && !c.set("CLIENT_SECRET_FILE"), c.lines["CLIENT_ID"],
		"CLIENT_ID needs CLIENT_SECRET_FILE (the client authenticates with its secret: CLIENT_AUTH basic or post)")
	need(c.Get("CLIENT_USERINFO") == "yes" && !c.set("CLIENT_ID"), c.lines["CLIENT_USERINFO"], "CLIENT_USERINFO=yes needs CLIENT_ID (S2l's client)")
	need(tokens == "command" && !c.set("TOKEN_COMMAND"), tokensLine, "USER_TOKENS=command needs TOKEN_COMMAND")
	need(tokens == "password" && !c.set("PASSWORD_FILE"), tokensLine, "USER_TOKENS=password needs PASSWORD_FILE")
	need(tokens == "login" && c.loginProtocol() == "", tokensLine, "USER_TOKENS=login needs LOGIN (form, form-page or admin-accept)")
	need((tokens == "password" || tokens == "login") && c.Get("USER_CLIENT_ID") == "", tokensLine,
		"USER_TOKENS=%s needs USER_CLIENT_ID (or CLIENT_ID): the client the tokens are issued to", tokens)
	c.checkLogin(p, need)
	c.checkJWTBearer(p, need)
	need(oidcPGPass.MatchString(c.Get("PG_DSN")), c.lines["PG_DSN"],
		"PG_DSN holds a password, which must not be in argv: put it in ~/.pgpass or PGPASSFILE")
}

// checkLogin: what LOGIN needs, and the form keys only a form login takes.
func (c *OIDCConfig) checkLogin(p *OIDCProblems, need func(bool, int, string, ...any)) {
	l, n := c.loginProtocol(), c.lines["LOGIN"]
	if l != "" {
		need(!c.set("REDIRECT_URI"), n, "LOGIN=%s needs REDIRECT_URI (registered for USER_CLIENT_ID: where a login ends)", l)
		need(c.Get("USER_CLIENT_ID") == "", n, "LOGIN=%s needs USER_CLIENT_ID (or CLIENT_ID): the client that logs users in", l)
		need(c.Get("USER_CLIENT_ID") != "" && c.Get("USER_CLIENT_SECRET_FILE") == "", n,
			"LOGIN=%s needs USER_CLIENT_SECRET_FILE (or CLIENT_SECRET_FILE): the code exchange authenticates the client", l)
	}
	need(c.formLogin() && !c.set("PASSWORD_FILE"), n, "LOGIN=%s needs PASSWORD_FILE (the users' password)", l)
	need(l == "admin-accept" && !c.set("LOGIN_ADMIN_URL"), n, "LOGIN=admin-accept needs LOGIN_ADMIN_URL (the admin API that accepts login and consent)")
	if !c.formLogin() {
		for _, k := range []string{"LOGIN_USER_FIELD", "LOGIN_PASSWORD_FIELD", oidcLoginField} {
			need(c.set(k) || (k == oidcLoginField && len(c.LoginFields) > 0), c.lines[k],
				"%s is for LOGIN=form or form-page (LOGIN is %s)", k, c.Get("LOGIN"))
		}
	}
}

// checkJWTBearer: a PEM key names no key id or issuer, so the file must;
// the JWT_BEARER_* keys want the key; client auth wants the client.
func (c *OIDCConfig) checkJWTBearer(p *OIDCProblems, need func(bool, int, string, ...any)) {
	key, n := c.Get("JWT_BEARER_KEY_FILE"), c.lines["JWT_BEARER_KEY_FILE"]
	if key == "" {
		for _, k := range []string{"JWT_BEARER_KID", "JWT_BEARER_ISS", "JWT_BEARER_SUB", "JWT_BEARER_AUD", "JWT_BEARER_SCOPE", "JWT_BEARER_CLIENT_AUTH"} {
			need(c.set(k), c.lines[k], "%s without JWT_BEARER_KEY_FILE: S2j signs its assertions with that key", k)
		}
		return
	}
	if b, err := os.ReadFile(key); err == nil && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		need(!c.set("JWT_BEARER_KID"), n, "JWT_BEARER_KEY_FILE is a PEM key: it needs JWT_BEARER_KID (the key id the IdP knows it by)")
		need(!c.set("JWT_BEARER_ISS"), n, "JWT_BEARER_KEY_FILE is a PEM key: it needs JWT_BEARER_ISS (the assertions' issuer)")
	}
	auth := c.Get("JWT_BEARER_CLIENT_AUTH")
	need(auth != "none" && !c.set("CLIENT_ID"), c.lines["JWT_BEARER_CLIENT_AUTH"], "JWT_BEARER_CLIENT_AUTH=%s needs CLIENT_ID and CLIENT_SECRET_FILE", auth)
}

// loopbackURL is why s is not an http(s) URL on loopback, or "". The host
// is read, never resolved: localhost, 127.0.0.0/8 or ::1.
func loopbackURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "want an http(s) URL"
	}
	if IsLoopbackHost(u.Hostname()) {
		return ""
	}
	return fmt.Sprintf("%s is not on loopback (127.0.0.0/8, [::1] or localhost): %s", u.Hostname(), LoopbackWhy)
}

// IsLoopbackHost reports whether host (no port) is localhost or a loopback
// address; a name is never looked up.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// secretFile is why the credential file path cannot be used, or "": it
// must be a regular file this process can read that gives group and
// others no access (0600, as every secret file idpbench writes).
func secretFile(path string) string {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file " + path
	case err != nil:
		return fmt.Sprintf("cannot read %s: %v", path, errors.Unwrap(err))
	case !st.Mode().IsRegular():
		return path + " is not a regular file"
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("%s is mode %04o, open to group or others: a credential file is 0600 (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("cannot read %s: %v", path, errors.Unwrap(err))
	}
	f.Close()
	return ""
}

// LoopbackURLProblem is why s is not an http(s) URL on loopback, or "".
func LoopbackURLProblem(s string) string { return loopbackURL(s) }
