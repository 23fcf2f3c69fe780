package products

import "github.com/idpbench/idpbench/internal/schema"

// Zitadel is Zitadel (scripts/products/zitadel): provisioned by
// "provision zitadel", logins through the Session API.
func Zitadel() Product {
	return Product{Name: "zitadel", Part: zitadelPart}
}

func zitadelPart(in Inputs) schema.Meta {
	start := "A: zitadel start-from-init --config zitadel.yaml --steps zitadel.yaml --masterkeyFromEnv --tlsMode disabled; B: zitadel start"
	if in.Compose() {
		start = "compose.zitadel.yml: start-from-init --masterkeyFromEnv --tlsMode disabled"
	}
	m := schema.Meta{
		Settings: map[string]string{
			"start":             start,
			"database_pool":     "MaxOpenConns 25, MaxIdleConns 25 (Zitadel default 10/5)",
			"external_domain":   "localhost, plain http (TLS disabled)",
			"login_v2_required": "false (no login container: logins go through the Session API)",
			"service_ping":      "off",
			"log_level":         "warn",
			"s2":                "client_credentials with a machine user secret (hashed per request)",
			"s2j":               "jwt-bearer grant with a machine user key, pre-signed assertion pool (exp 1 h)",
			"s3":                "introspection by an API app with private_key_jwt (client assertion pool)",
			"s4":                "Session API login: authorize with x-zitadel-login-client, session with user and password checks, auth request finalized, code exchange",
			"s5_pool_mode":      "chain",
		},
		ConfigSources: []schema.Link{
			{What: "Zitadel self-hosting: production setup", URL: "https://zitadel.com/docs/self-hosting/manage/production"},
			{What: "configuration (defaults.yaml, steps.yaml, ZITADEL_* variables)", URL: "https://zitadel.com/docs/self-hosting/manage/configure"},
			{What: "database settings", URL: "https://zitadel.com/docs/self-hosting/manage/database"},
			{What: "compose deployment", URL: "https://zitadel.com/docs/self-hosting/deploy/compose"},
			{What: "custom login UI with the OIDC standard (Session API flow)", URL: "https://zitadel.com/docs/guides/integrate/login-ui/oidc-standard"},
			{What: "JWT profile grant (machine users)", URL: "https://zitadel.com/docs/guides/integrate/service-users/private-key-jwt"},
		},
		Deviations: []schema.Note{
			{What: "plain http, TLS disabled", Why: "the other products run plain http on loopback too; TLS would measure the TLS stack"},
			{What: "MaxOpenConns/MaxIdleConns 25/25", Why: "the same recorded pool size as Hydra and Keycloak instead of Zitadel's 10/5"},
			{What: "log level warn", Why: "request logging would measure logging"},
		},
		Notes: []string{
			"Provisioning (provision zitadel) goes through Zitadel's management, admin and v2 APIs; a discovery smoke step must be clean before anything is measured (projections lag behind writes).",
			"S2j uses a pre-signed assertion pool; Zitadel's own benchmark signs one per iteration (the grant is the same; signing cost moves out of the driver).",
		},
	}
	if !in.Compose() {
		m.Deviations = append(m.Deviations, schema.Note{What: "native mode connects as the cluster superuser",
			Why: "the shared PostgreSQL admits only its superuser on loopback; Zitadel's init finds the user and database present and creates neither"})
	}
	return m
}
