package products

import (
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// OIDC is the generic adapter (scripts/products/oidc): any OpenID provider
// described by a KEY=value configuration file. Its product name is the
// file's NAME, its N/A reasons depend on the file (the adapter's own
// product_na_reason), and the file's NOTE, DEVIATION, CONFIG_SOURCE and
// SETTING lines come in as Inputs.Config.
func OIDC() Product {
	return Product{
		Name:        "oidc",
		TakesConfig: true,
		Params: []Param{
			{"config_file", "the configuration file (IDPBENCH_OIDC_CONFIG)"},
			{"issuer", "ISSUER"},
			{"discovery", "the discovery document's URL (DISCOVERY_URL, else from ISSUER)"},
			{"client_auth", "CLIENT_AUTH (default basic)"},
			{"user_tokens", "how user tokens are had, in words (USER_TOKENS and its keys)"},
			{"s5_pool_mode", "REFRESH_POOL_MODE (default chain)"},
			{"s3_tokens", "INTROSPECT_TOKENS (default client_credentials)"},
			{"s3_client_auth", "INTROSPECT_AUTH; empty: the introspecting client's own"},
			{"start_command", "START_COMMAND; empty: the IdP was already running"},
			{"token_endpoint", "TOKEN_ENDPOINT, an override of the discovery document's; may be empty"},
			{"introspection_endpoint", "INTROSPECTION_ENDPOINT override; may be empty"},
			{"userinfo_endpoint", "USERINFO_ENDPOINT override; may be empty"},
			{"grant_types", "GRANT_TYPES override; may be empty"},
		},
		Part: oidcPart,
	}
}

func oidcPart(in Inputs) schema.Meta {
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
			"adapter": "oidc (generic: scripts/products/oidc)", "config_file": cfgFile,
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
