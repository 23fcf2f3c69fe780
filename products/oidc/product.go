package oidc

import (
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
// MetaScenarioArgs, so its entry has no NA and no scenario table: Ask reads
// the file the run recorded and its discovery document), and the file's NOTE,
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
			{Name: "authorization_endpoint", Doc: "AUTHORIZATION_ENDPOINT override; may be empty"},
			{Name: "login", Doc: "S4's login in words (LOGIN and its keys); none: no LOGIN"},
			{Name: "client_userinfo", Doc: "CLIENT_USERINFO (S2l: userinfo answers a client's token)"},
			{Name: "jwt_bearer", Doc: "S2j's assertions in words (JWT_BEARER_*); none: no key"},
		},
		Part:    oidcPart,
		Ask:     ask,
		Samples: samples,
		Meta:    meta,
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
			"s4_login": in.P("login"), "s2l_client_userinfo": in.P("client_userinfo"), "s2j_assertions": in.P("jwt_bearer"),
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
		{"userinfo endpoint", "userinfo_endpoint"}, {"grant types", "grant_types"}, {"authorization endpoint", "authorization_endpoint"}} {
		if v := in.P(o.param); v != "" {
			m.Deviations = append(m.Deviations, schema.Note{What: o.what + " overridden: " + v,
				Why: "set in the configuration file, not taken from the discovery document"})
		}
	}
	if l := in.P("login"); l != "none" && l != "" {
		m.Notes = append(m.Notes, "S4 logs users in through "+l+"; the success rule is the scenario's.")
	}
	if start == "" {
		m.Notes = append(m.Notes, "Cold start N/A: no START_COMMAND in the configuration, so the IdP was already running when the run began.")
	}
	return m
}
