package load

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// Grant types and assertion types on the wire.
const (
	grantClientCredentials = "client_credentials"
	grantRefreshToken      = "refresh_token"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	assertionTypeJWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// scenario turns a credential into a request and judges a 2xx body.
type scenario struct {
	// build makes the request for one iteration; cred is the pool credential
	// ("" without a pool), assertion the client assertion ("" without one).
	build func(cred, assertion string) *Request
	// check judges a 2xx body; rotated is the refresh token the response
	// carries, for chain mode ("" when none).
	check func(body []byte) (ok bool, rotated string)
}

// newScenario builds the scenario of a validated Config.
func newScenario(c *Config) scenario {
	target := c.URL.String()
	switch c.Scenario {
	case schema.ScenarioDiscovery:
		return scenario{c.getter(target, ""), checkString("issuer")}
	case schema.ScenarioUserinfo:
		return scenario{c.getter(target, "Bearer "), checkString("sub")}
	case schema.ScenarioIntrospect:
		return scenario{c.poster(target, "token", nil), checkActive}
	case schema.ScenarioClientCredentials:
		return scenario{c.poster(target, "", c.grant(grantClientCredentials)), checkString("access_token")}
	case schema.ScenarioRefresh:
		return scenario{c.poster(target, "refresh_token", c.grant(grantRefreshToken)), checkRefresh}
	case schema.ScenarioJWTBearer:
		return scenario{c.poster(target, "assertion", c.grant(grantJWTBearer)), checkString("access_token")}
	}
	return scenario{c.custom(target), checkContains(c.Expect)}
}

// grant returns the fixed form fields of a token request.
func (c *Config) grant(grantType string) url.Values {
	v := url.Values{"grant_type": {grantType}}
	if c.Scope != "" {
		v.Set("scope", c.Scope)
	}
	return v
}

// getter sends GET; with authPrefix set, the credential goes into the
// Authorization header after it.
func (c *Config) getter(target, authPrefix string) func(string, string) *Request {
	return func(cred, _ string) *Request {
		h := c.baseHeader()
		h.Set("Accept", "application/json")
		if authPrefix != "" {
			h.Set("Authorization", authPrefix+cred)
		}
		return &Request{Method: http.MethodGet, URL: target, Header: h}
	}
}

// poster sends a form POST of fixed fields, the credential as credField
// (when not ""), and the client authentication.
func (c *Config) poster(target, credField string, fixed url.Values) func(string, string) *Request {
	basic := "Basic " + base64.StdEncoding.EncodeToString(
		[]byte(url.QueryEscape(c.ClientID)+":"+url.QueryEscape(c.ClientSecret)))
	return func(cred, assertion string) *Request {
		form := url.Values{}
		for k, v := range fixed {
			form[k] = v
		}
		if credField != "" {
			form.Set(credField, cred)
		}
		h := c.baseHeader()
		h.Set("Content-Type", "application/x-www-form-urlencoded")
		h.Set("Accept", "application/json")
		c.authenticate(form, h, basic, assertion)
		return &Request{Method: http.MethodPost, URL: target, Header: h, Body: []byte(form.Encode())}
	}
}

// authenticate adds the client authentication to a form request.
func (c *Config) authenticate(form url.Values, h http.Header, basic, assertion string) {
	switch c.ClientAuth {
	case AuthBasic:
		h.Set("Authorization", basic)
	case AuthPost:
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
	case AuthAssertion:
		form.Set("client_assertion_type", assertionTypeJWTBearer)
		form.Set("client_assertion", assertion)
		fallthrough
	case AuthNone:
		if c.ClientID != "" {
			form.Set("client_id", c.ClientID)
		}
	}
}

// custom is the request scenario: method, headers and body from the flags,
// Placeholder replaced by the credential.
func (c *Config) custom(target string) func(string, string) *Request {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	return func(cred, _ string) *Request {
		h := http.Header{}
		for _, kv := range c.Headers {
			h.Add(strings.ReplaceAll(kv.Key, Placeholder, cred), strings.ReplaceAll(kv.Value, Placeholder, cred))
		}
		var body []byte
		if c.Body != "" {
			body = []byte(strings.ReplaceAll(c.Body, Placeholder, cred))
		}
		return &Request{Method: method, URL: target, Header: h, Body: body}
	}
}

// baseHeader holds the --header values every scenario sends.
func (c *Config) baseHeader() http.Header {
	h := http.Header{}
	for _, kv := range c.Headers {
		h.Add(kv.Key, kv.Value)
	}
	return h
}

// stringMember is the non-empty string value of a top-level member.
func stringMember(body []byte, field string) (string, bool) {
	raw, ok := member(body, field)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", false
	}
	return s, true
}

// checkString requires a non-empty string member.
func checkString(field string) func([]byte) (bool, string) {
	return func(body []byte) (bool, string) {
		_, ok := stringMember(body, field)
		return ok, ""
	}
}

// checkActive requires "active": true (the boolean, RFC 7662).
func checkActive(body []byte) (bool, string) {
	raw, ok := member(body, "active")
	return ok && string(raw) == "true", ""
}

// checkRefresh requires an access token and returns the rotated refresh token.
func checkRefresh(body []byte) (bool, string) {
	if _, ok := stringMember(body, "access_token"); !ok {
		return false, ""
	}
	rt, _ := stringMember(body, "refresh_token")
	return true, rt
}

// checkContains passes every 2xx body, or only those containing substr.
func checkContains(substr string) func([]byte) (bool, string) {
	return func(body []byte) (bool, string) {
		return substr == "" || strings.Contains(string(body), substr), ""
	}
}
