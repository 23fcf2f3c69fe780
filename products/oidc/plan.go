package oidc

import (
	"fmt"
	"strings"

	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/schema"
)

// OIDCPlanRow is one scenario of a run's plan: whether it runs and how its
// requests and tokens are had, or why it is N/A.
type OIDCPlanRow struct {
	ID, Scenario string
	// Status: PlanRun, PlanNA, or PlanAtUp (no discovery document read: it
	// runs if the document has what Detail names).
	Status string
	// Detail: how it runs, the N/A reason (NA's, which the run's meta and
	// report give too), or what the discovery document must have.
	Detail string
}

// A plan row's status.
const (
	PlanRun  = "run"
	PlanNA   = "N/A"
	PlanAtUp = "at up"
)

// Plan is what a run with this configuration measures, scenario by
// scenario (the report's order), by the discovery document d; without one
// (nil), what the file alone rules out is N/A and the rest is decided at up.
func (c *OIDCConfig) Plan(d OIDCDiscovery) []OIDCPlanRow {
	var rows []OIDCPlanRow
	for _, s := range schema.Scenarios {
		if s.Name == schema.ScenarioRequest {
			continue
		}
		r := OIDCPlanRow{ID: s.ID, Scenario: s.Name, Status: PlanNA}
		switch {
		case d == nil && c.NA(s.Name, permissive()) == "" && s.Name != "discovery":
			r.Status, r.Detail = PlanAtUp, "runs if the discovery document has "+c.needs(s.Name)
		case d == nil:
			r.Detail = c.NA(s.Name, permissive())
		default:
			r.Detail = c.NA(s.Name, d)
		}
		if r.Detail == "" {
			r.Status, r.Detail = PlanRun, c.how(s.Name, d)
		}
		rows = append(rows, r)
	}
	return rows
}

// permissive is a discovery document that rules nothing out: the plan
// asks NA with it what the file alone rules out.
func permissive() OIDCDiscovery {
	return OIDCDiscovery{
		"token_endpoint": []byte(`"http://127.0.0.1/t"`), "introspection_endpoint": []byte(`"http://127.0.0.1/i"`),
		"userinfo_endpoint": []byte(`"http://127.0.0.1/u"`), "authorization_endpoint": []byte(`"http://127.0.0.1/a"`),
		"grant_types_supported": []byte(`["client_credentials","authorization_code","refresh_token","` + GrantJWTBearer + `"]`),
	}
}

// needs is what scenario needs of the discovery document that the file
// does not override.
func (c *OIDCConfig) needs(scenario string) string {
	var n []string
	endpoint := func(s string) {
		if e := oidcEndpoints[s]; c.Get(e[0]) == "" {
			n = append(n, e[1])
		}
	}
	grant := func(g string) {
		if c.Get("GRANT_TYPES") == "" {
			n = append(n, g+" in grant_types_supported")
		}
	}
	switch scenario {
	case "client_credentials":
		endpoint(scenario)
		grant("client_credentials")
	case "client_credentials_login":
		endpoint(scenario)
		endpoint("userinfo")
		grant("client_credentials")
	case "jwt_bearer":
		endpoint(scenario)
		grant(GrantJWTBearer)
	case "auth_code":
		endpoint(scenario)
		endpoint("refresh")
		grant("authorization_code (or no list)")
	case "introspect":
		endpoint(scenario)
		if c.Get("INTROSPECT_TOKENS") != "user" {
			endpoint("client_credentials")
			grant("client_credentials")
		}
	case "refresh":
		endpoint(scenario)
		grant("refresh_token")
	case "userinfo":
		endpoint(scenario)
	}
	if len(n) == 0 {
		return "nothing more (the file names it all)"
	}
	return strings.Join(n, ", ")
}

// how is how scenario's requests and tokens are had, in words.
func (c *OIDCConfig) how(scenario string, d OIDCDiscovery) string {
	url, _ := c.Endpoint(scenario, d)
	token, _ := c.Endpoint("client_credentials", d)
	client := func(prefix, auth string) string {
		if auth == "" {
			auth = c.Get(prefix + "_AUTH")
		}
		if auth == "none" {
			return "no client authentication"
		}
		return fmt.Sprintf("client %s (%s)", c.Get(prefix+"_ID"), auth)
	}
	withScope := func(s string) string {
		if s == "" {
			return ""
		}
		return ", scope " + s
	}
	switch scenario {
	case "discovery":
		return "GET " + url
	case "client_credentials":
		return "POST " + url + ", grant client_credentials, " + client("CLIENT", "") + withScope(c.Get("CLIENT_SCOPE"))
	case "client_credentials_login":
		userinfo, _ := c.Endpoint("userinfo", d)
		return "POST " + url + ", grant client_credentials, " + client("CLIENT", "") + withScope(c.Get("CLIENT_USERINFO_SCOPE")) +
			", then GET " + userinfo + " with its token (2xx with a sub)"
	case "jwt_bearer":
		return fmt.Sprintf("POST %s, grant jwt-bearer (RFC 7523), %s%s; assertions signed by mintpool with %s (kid %s, iss %s, aud %s, %ss)",
			url, client("CLIENT", c.Get("JWT_BEARER_CLIENT_AUTH")), withScope(c.Get("JWT_BEARER_SCOPE")), c.Get("JWT_BEARER_KEY_FILE"),
			orFile(c.Get("JWT_BEARER_KID")), orFile(c.Get("JWT_BEARER_ISS")), c.Get("JWT_BEARER_AUD"), c.Get("JWT_BEARER_TTL_S"))
	case "auth_code":
		return c.loginWords(url) + withScope(c.Get("LOGIN_SCOPE")) + "; the code exchanged at " + token + ", " + client("USER_CLIENT", "")
	case "introspect":
		tokens := "client_credentials tokens of " + client("CLIENT", "")
		who := "CLIENT"
		if c.Get("INTROSPECT_TOKENS") == "user" {
			tokens, who = "user tokens ("+c.UserTokens()+")", "USER_CLIENT"
		}
		return "POST " + url + " as " + client(who, c.Get("INTROSPECT_AUTH")) + "; tokens: " + tokens + ", reused"
	case "refresh":
		return "POST " + url + ", grant refresh_token, " + client("USER_CLIENT", "") + "; refresh tokens: " + c.UserTokens() +
			", pool mode " + c.Get("REFRESH_POOL_MODE")
	case "userinfo":
		return "GET " + url + "; access tokens: " + c.UserTokens() + ", reused"
	}
	return ""
}

// loginWords is S4's login in words: its protocol, the users and what a
// form login fills.
func (c *OIDCConfig) loginWords(auth string) string {
	users := fmt.Sprintf("%s over %s users", c.Get("USERNAME"), c.Get("USERS"))
	if c.loginProtocol() == login.AdminAccept {
		return fmt.Sprintf("login admin-accept at %s (admin API %s): subjects %s", auth, c.Get("LOGIN_ADMIN_URL"), users)
	}
	fields := "the page's own user name and password inputs"
	if u, p := c.Get("LOGIN_USER_FIELD"), c.Get("LOGIN_PASSWORD_FIELD"); u != "" || p != "" {
		fields = fmt.Sprintf("fields %s and %s", orPage(u), orPage(p))
	}
	for _, kv := range c.LoginFields {
		fields += ", " + kv[0] + "=" + kv[1]
	}
	return fmt.Sprintf("login %s at %s: %s (%s), a consent form answered where shown", c.loginProtocol(), auth, users, fields)
}

func orFile(v string) string {
	if v == "" {
		return "from the key file"
	}
	return v
}

func orPage(v string) string {
	if v == "" {
		return "the page's own"
	}
	return v
}

// PlanText is the plan as the check prints it: a head line, then one
// line a scenario, "ID scenario run|N/A: detail".
func PlanText(c *OIDCConfig, rows []OIDCPlanRow, discovery string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan for %s (%s), %s:\n", c.Get("NAME"), c.Abs, discovery)
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-4s %-25s %-5s %s\n", r.ID, r.Scenario, r.Status, r.Detail)
	}
	return b.String()
}
