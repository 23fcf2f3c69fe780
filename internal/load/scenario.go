package load

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/idpbench/idpbench/internal/oauthform"
	"github.com/idpbench/idpbench/internal/schema"
)

// Grant types and assertion types on the wire.
const (
	grantClientCredentials = "client_credentials"
	grantRefreshToken      = "refresh_token"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	assertionTypeJWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// userAgent is sent by both engines, so the target sees the same request.
const userAgent = "idpbench-loadstep"

// scenario is a request template and the judge of a 2xx body. The template
// is built once per step; an iteration only splices in its credential.
type scenario struct {
	method string
	header template // header block, Host first
	body   template // nil: no body
	// check judges a 2xx body; rotated is the refresh token the response
	// carries, for chain mode ("" when none).
	check func(body []byte) (ok bool, rotated string)
}

// build fills r for one iteration; cred is the pool credential ("" without
// a pool), assertion the client assertion ("" without one).
func (sc *scenario) build(r *Request, cred, assertion string) {
	r.Method = sc.method
	r.Header = sc.header.append(r.Header[:0], cred, assertion)
	r.Body = r.Body[:0]
	if sc.body != nil {
		r.Body = sc.body.append(r.Body, cred, assertion)
	}
}

// checkOf is the success rule a validated Config's step is judged by
// (schema.Step.Check): the scenario's own, except for the custom request
// and --introspect-check answered, whose rule the flags choose.
func checkOf(c *Config) string {
	switch {
	case c.Scenario == schema.ScenarioRequest:
		return schema.RequestCheck(c.Expect)
	case c.Scenario == schema.ScenarioIntrospect && c.IntrospectCheck == CheckAnswered:
		return schema.CheckAnswered
	}
	return schema.ScenarioCheck(c.Scenario)
}

// newScenario builds the scenario of a validated Config; its check is the
// judge of checkOf(c).
func newScenario(c *Config) scenario {
	h := c.defaultHeaders()
	switch c.Scenario {
	case schema.ScenarioDiscovery:
		return c.getter(h, false, checkString("issuer"))
	case schema.ScenarioUserinfo:
		return c.getter(h, true, checkString("sub"))
	case schema.ScenarioIntrospect:
		if c.IntrospectCheck == CheckAnswered {
			return c.poster(h, "token", "", checkAnswered)
		}
		return c.poster(h, "token", "", checkActive)
	case schema.ScenarioClientCredentials:
		return c.poster(h, "", grantClientCredentials, checkString("access_token"))
	case schema.ScenarioRefresh:
		return c.poster(h, "refresh_token", grantRefreshToken, checkRefresh)
	case schema.ScenarioJWTBearer:
		return c.poster(h, "assertion", grantJWTBearer, checkString("access_token"))
	}
	return c.custom(h)
}

// getter sends GET; with bearer set, the credential goes into the
// Authorization header.
func (c *Config) getter(h *headers, bearer bool, check func([]byte) (bool, string)) scenario {
	h.set("Accept", lit("application/json"))
	if bearer {
		h.set("Authorization", lit("Bearer ").hole(slotCred))
	}
	return scenario{method: http.MethodGet, header: c.finish(h, false), check: check}
}

// poster sends a form POST: the grant type and scope (when grantType is
// not ""), the credential as credField (when not ""), and the client
// authentication.
func (c *Config) poster(h *headers, credField, grantType string, check func([]byte) (bool, string)) scenario {
	var f form
	if grantType != "" {
		f.set("grant_type", grantType)
		if c.Scope != "" {
			f.set("scope", c.Scope)
		}
	}
	if credField != "" {
		f.slot(credField, slotCredForm)
	}
	h.set("Accept", lit("application/json"))
	h.set("Content-Type", lit("application/x-www-form-urlencoded"))
	c.authenticate(&f, h)
	return scenario{method: http.MethodPost, header: c.finish(h, false), body: f.t, check: check}
}

// authenticate adds the client authentication to a form request.
func (c *Config) authenticate(f *form, h *headers) {
	switch c.ClientAuth {
	case AuthBasic:
		h.set("Authorization", lit(oauthform.Client{ID: c.ClientID, Secret: c.ClientSecret}.BasicHeader()))
	case AuthPost:
		f.set("client_id", c.ClientID)
		f.set("client_secret", c.ClientSecret)
	case AuthAssertion:
		f.set("client_assertion_type", assertionTypeJWTBearer)
		f.slot("client_assertion", slotAssertionForm)
		fallthrough
	case AuthNone:
		if c.ClientID != "" {
			f.set("client_id", c.ClientID)
		}
	}
}

// custom is the request scenario: method, headers and body from the flags,
// Placeholder replaced by the credential.
func (c *Config) custom(h *headers) scenario {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	sc := scenario{method: method, header: c.finish(h, true), check: checkContains(c.Expect)}
	if c.Body != "" {
		sc.body = template{}.text(c.Body)
	}
	return sc
}

// defaultHeaders are the headers every request starts with.
func (c *Config) defaultHeaders() *headers {
	h := &headers{}
	h.set("Host", lit(c.URL.Host))
	h.set("User-Agent", lit(userAgent))
	return h
}

// finish adds the --header values, which replace a default of the same
// name, and credentials in the URL (as net/http does, when no Authorization
// is set), and renders the header block. expand turns Placeholder in the
// values into the credential (the request scenario).
func (c *Config) finish(h *headers, expand bool) template {
	for _, kv := range c.Headers {
		v := lit(kv.Value)
		if expand {
			v = template{}.text(kv.Value)
		}
		h.set(kv.Key, v)
	}
	if u := c.URL.User; u != nil && h.get("Authorization") == nil {
		p, _ := u.Password()
		h.set("Authorization", lit("Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+p))))
	}
	return h.template()
}

// credInHeader reports whether the scenario puts the pool credential into a
// header (where it must be a valid header value).
func (c *Config) credInHeader() bool {
	h := newScenario(c).header
	return h.has(slotCred)
}

func lit(s string) template { return template{}.lit(s) }

// headers is an ordered header set; set replaces a header of the same name.
type headers struct{ lines []headerLine }

type headerLine struct {
	key   string
	value template
}

func (h *headers) set(key string, value template) {
	for i := range h.lines {
		if strings.EqualFold(h.lines[i].key, key) {
			h.lines[i].value = value
			return
		}
	}
	h.lines = append(h.lines, headerLine{key, value})
}

func (h *headers) get(key string) template {
	for _, l := range h.lines {
		if strings.EqualFold(l.key, key) {
			return l.value
		}
	}
	return nil
}

func (h *headers) template() template {
	var t template
	for _, l := range h.lines {
		t = t.lit(l.key + ": ")
		for _, p := range l.value {
			if p.slot == slotLiteral {
				t = t.lit(p.lit)
			} else {
				t = t.hole(p.slot)
			}
		}
		t = t.lit("\r\n")
	}
	return t
}

// checkString requires a non-empty string member.
func checkString(field string) func([]byte) (bool, string) {
	return func(body []byte) (bool, string) {
		raw, ok := member(body, field)
		return ok && nonEmptyString(raw), ""
	}
}

// checkActive requires "active": true (the boolean, RFC 7662).
func checkActive(body []byte) (bool, string) {
	raw, ok := member(body, "active")
	return ok && string(raw) == "true", ""
}

// Introspection checks (Config.IntrospectCheck).
const (
	CheckActive   = "active"   // "active": true (the default)
	CheckAnswered = "answered" // "active" is a boolean: the caller was authenticated and answered
)

// checkAnswered requires an "active" boolean, true or false: a valid RFC
// 7662 answer to an authenticated caller, whatever it says of the token.
func checkAnswered(body []byte) (bool, string) {
	raw, ok := member(body, "active")
	return ok && (string(raw) == "true" || string(raw) == "false"), ""
}

// checkRefresh requires an access token and returns the rotated refresh token.
func checkRefresh(body []byte) (bool, string) {
	if raw, ok := member(body, "access_token"); !ok || !nonEmptyString(raw) {
		return false, ""
	}
	raw, ok := member(body, "refresh_token")
	if !ok || !nonEmptyString(raw) {
		return true, ""
	}
	var rt string
	if json.Unmarshal(raw, &rt) != nil {
		return true, ""
	}
	return true, rt
}

// checkContains passes every 2xx body, or only those containing substr.
func checkContains(substr string) func([]byte) (bool, string) {
	want := []byte(substr)
	return func(body []byte) (bool, string) {
		return bytes.Contains(body, want), ""
	}
}
