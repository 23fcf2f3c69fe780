package schema

// Scenario names as loadstep's --scenario takes them.
const (
	ScenarioDiscovery         = "discovery"
	ScenarioClientCredentials = "client_credentials"
	// ScenarioClientCredentialsLogin is an iteration: client_credentials,
	// then userinfo with the new token (Zitadel's k6
	// machine_client_credentials_login).
	ScenarioClientCredentialsLogin = "client_credentials_login"
	ScenarioJWTBearer              = "jwt_bearer"
	ScenarioIntrospect             = "introspect"
	ScenarioAuthCode               = "auth_code"
	ScenarioRefresh                = "refresh"
	ScenarioUserinfo               = "userinfo"
	ScenarioRequest                = "request"
)

// ScenarioInfo describes one scenario for reports.
type ScenarioInfo struct {
	ID    string // S1, S2 ...
	Name  string // as in --scenario
	Title string // one line for a table
}

// Scenarios lists the scenarios in report order.
var Scenarios = []ScenarioInfo{
	{"S1", ScenarioDiscovery, "GET /.well-known/openid-configuration"},
	{"S2", ScenarioClientCredentials, "token, grant_type=client_credentials"},
	{"S2l", ScenarioClientCredentialsLogin, "client_credentials -> userinfo (one iteration)"},
	{"S2j", ScenarioJWTBearer, "token, grant_type=jwt-bearer (RFC 7523)"},
	{"S3", ScenarioIntrospect, "token introspection (RFC 7662)"},
	{"S4", ScenarioAuthCode, "headless login -> code -> token"},
	{"S5", ScenarioRefresh, "token, grant_type=refresh_token"},
	{"S6", ScenarioUserinfo, "GET userinfo with a bearer token"},
	{"X", ScenarioRequest, "custom request"},
}

// IterationScenario reports whether a scenario's iteration is several named
// HTTP requests (Step.CountUnit is CountIterations).
func IterationScenario(name string) bool {
	return name == ScenarioAuthCode || name == ScenarioClientCredentialsLogin
}

// LookupScenario returns the scenario with that name.
func LookupScenario(name string) (ScenarioInfo, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return ScenarioInfo{}, false
}
