package products

import "github.com/idpbench/idpbench/internal/schema"

// Hydra is Ory Hydra (scripts/products/hydra).
func Hydra() Product {
	return Product{
		Name: "hydra",
		NA: map[string]string{
			"jwt_bearer":               "Hydra's jwt-bearer grant needs a trust relationship per issuer; not provisioned (S2j is Zitadel's M2M path)",
			"client_credentials_login": "Hydra answers userinfo for a client_credentials token with 200 and no sub (no user behind it): S2l's rule wants a sub",
		},
		Part: hydraPart,
	}
}

func hydraPart(in Inputs) schema.Meta {
	m := schema.Meta{
		Settings: map[string]string{
			"dsn_pool":     "max_conns=25, max_idle_conns=25",
			"s5_pool_mode": "chain: one refresh token per connection seeds a chain that follows rotation",
			"cold_start":   "A: hydra migrate sql up -e --yes && exec hydra serve all (one command, empty database); B: hydra serve all on the migrated database",
			"log_level":    "warn",
			"config":       "hydra serve all --dev -c hydra.yml (public and admin on 127.0.0.1)",
		},
		ConfigSources: []schema.Link{
			{What: "configuration reference", URL: "https://www.ory.sh/docs/hydra/reference/configuration"},
			{What: "production guide", URL: "https://www.ory.sh/docs/hydra/self-hosted/production"},
			{What: "PostgreSQL DSN and connection pool", URL: "https://www.ory.sh/docs/self-hosted/deployment#postgresql"},
			{What: "token introspection on the admin API", URL: "https://www.ory.sh/docs/hydra/guides/oauth2-token-introspection"},
			{What: "login and consent flow (headless accept)", URL: "https://www.ory.sh/docs/hydra/guides/login"},
		},
		Deviations: []schema.Note{
			{What: "serve all --dev", Why: "the issuer is plain http on loopback; --dev allows http (TLS would measure the TLS stack, not the IdP)"},
			{What: "log.level warn", Why: "info logs two lines per request, which would measure logging"},
			{What: "sqa.opt_out true", Why: "no telemetry from a benchmark"},
			{What: "DSN max_conns=25&max_idle_conns=25", Why: "an explicit, recorded pool size instead of the CPU-derived default"},
		},
		Notes: []string{
			"S6 uses openid user tokens from the headless login flow (sub = a user). Checked: Hydra v2.3.0 userinfo also answers 200 to a client_credentials token, with no sub; that is not what S6 measures.",
			"S3 calls the admin port without client authentication, as Ory documents (the admin API is not exposed publicly).",
			"S5 uses pool mode chain: Hydra rotates refresh tokens (single use; reuse revokes the chain), so each connection refreshes with the token its previous response returned, seeded by tokens minted through the headless login flow before each step. docs/design.md allows chain where the product rotates; a consumed pool would need a headless login per request.",
			"Cold start A includes the SQL migrations on the empty database; the first JWKS request (RSA key generation) comes after ready and is not timed.",
		},
		Known: []schema.Known{{
			Scenario: "discovery",
			What:     "Hydra v2.3.0 serialises discovery: every request takes a per-key-set write lock around a database read and AES-GCM decrypt of its JWKs (jwk/helper.go GetOrGenerateKeys), so S1 stays flat whatever the connections. It is Hydra's, not this configuration; fixed on master, in no release.",
			Ref:      "https://github.com/ory/hydra/issues/3863",
		}},
	}
	if in.Compose() {
		m.Settings["config"] = "serve all --dev, configured through the environment (deploy/compose/compose.hydra.yml)"
		m.Settings["cold_start"] = "A: compose up on an empty database volume (migration job, then serve all); B: compose up on the kept volume (the migration job runs again and finds nothing to do)"
	}
	return m
}
