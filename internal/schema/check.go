package schema

import "strconv"

// Success rules: what a request (or an iteration) must get to count as ok.
// Each scenario has one rule, the same for every product; loadstep judges
// by it and records it in Step.Check, and aggregate compares only cells of
// one scenario that were judged by the same rule. A 4xx or 5xx response is
// never ok under any rule (the 3xx hops of a login flow are its expected
// steps, not failures).
//
// The strings are stable identifiers: changing one changes what a step
// claims, so it goes with a change of the judge in internal/load.
const (
	// CheckIssuer: a 2xx JSON body with a non-empty "issuer" (S1).
	CheckIssuer = "2xx json issuer"
	// CheckAccessToken: a 2xx JSON body with a non-empty "access_token"
	// (S2, S2j, S5).
	CheckAccessToken = "2xx json access_token"
	// CheckActive: a 2xx JSON body with "active": true, the boolean (S3,
	// RFC 7662).
	CheckActive = "2xx json active=true"
	// CheckSub: a 2xx JSON body with a non-empty "sub" (S6).
	CheckSub = "2xx json sub"
	// CheckCCLogin: the token request as CheckAccessToken, then userinfo
	// with that token as CheckSub (S2l).
	CheckCCLogin = "oidc_token: " + CheckAccessToken + "; oidc_user_info: " + CheckSub
	// CheckAuthCode: every login hop answers as the flow expects (3xx hops
	// included, a redirect to the client with a code at the end), then the
	// code exchange as CheckAccessToken (S4).
	CheckAuthCode = "login hops as the flow expects; oidc_token: " + CheckAccessToken

	// CheckAnswered is not a scenario's rule: a 2xx JSON body with an
	// "active" boolean, true or false — an authenticated caller got a valid
	// RFC 7662 answer, whatever it says of the token. loadstep judges by it
	// only when asked (--introspect-check answered, for tests of client
	// authentication); the report never ranks such a step beside S3.
	CheckAnswered = "2xx json active=bool"
	// Check2xx: any 2xx response (the custom request scenario without
	// --expect).
	Check2xx = "2xx"
)

// ScenarioCheck is the success rule of a scenario; "" for the custom
// request scenario, whose rule its flags set (see RequestCheck).
func ScenarioCheck(scenario string) string {
	switch scenario {
	case ScenarioDiscovery:
		return CheckIssuer
	case ScenarioClientCredentials, ScenarioJWTBearer, ScenarioRefresh:
		return CheckAccessToken
	case ScenarioIntrospect:
		return CheckActive
	case ScenarioUserinfo:
		return CheckSub
	case ScenarioClientCredentialsLogin:
		return CheckCCLogin
	case ScenarioAuthCode:
		return CheckAuthCode
	}
	return ""
}

// RequestCheck is the rule of a custom request step: any 2xx, or a 2xx
// whose body contains expect.
func RequestCheck(expect string) string {
	if expect == "" {
		return Check2xx
	}
	return "2xx body contains " + strconv.Quote(expect)
}

// DescribeCheck says in words what a rule accepts ("" for an unknown one).
func DescribeCheck(rule string) string {
	switch rule {
	case CheckIssuer:
		return "2xx, a JSON body with a non-empty `issuer`"
	case CheckAccessToken:
		return "2xx, a JSON body with a non-empty `access_token`"
	case CheckActive:
		return "2xx, a JSON body with `\"active\": true`"
	case CheckSub:
		return "2xx, a JSON body with a non-empty `sub`"
	case CheckCCLogin:
		return "the token request as S2, then userinfo with that token as S6"
	case CheckAuthCode:
		return "every login hop answers as the flow expects (its 3xx hops included, the last redirecting to the client with a code), then the code exchange as S2"
	case CheckAnswered:
		return "2xx, a JSON body with an `active` boolean, true or false (not S3's rule)"
	case Check2xx:
		return "any 2xx"
	}
	return ""
}
