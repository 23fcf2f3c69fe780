package hydra

import (
	"fmt"
	"slices"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is Ory Hydra (products/hydra/adapter).
func Product() product.Product {
	return product.Product{
		Name:         "hydra",
		InDefaultRun: true,
		Provision:    &provisionCommand,
		Docs:         "docs/products/hydra.md",
		ComposeFile:  "products/hydra/compose.yml",
		NA: map[string]string{
			"jwt_bearer":               "Hydra's jwt-bearer grant needs a trust relationship per issuer; not provisioned (S2j is Zitadel's M2M path)",
			"client_credentials_login": "Hydra answers userinfo for a client_credentials token with 200 and no sub (no user behind it): S2l's rule wants a sub",
		},
		Part:          hydraPart,
		ReadFacts:     readFacts,
		ReadFactsFrom: readFrom,
		ServerMetrics: serverMetrics,
		Answers:       &product.Answers{Table: hydraTable, Readback: hydraReadback, Setup: hydraSetup, Config: hydraConfig},
	}
}

// Hydra's one client, created by "provision hydra" with a secret generated
// per run (client_secret_basic; client_credentials, authorization_code,
// refresh_token; scope "openid offline_access"), and the redirect URI of
// its headless logins (nothing listens there).
const (
	hydraClient   = "bench-svc"
	hydraRedirect = "http://127.0.0.1/cb"
	hydraScope    = "openid offline_access"
	hydraUsers    = "100" // the subjects user0..user99 of the headless logins
)

// hydraTable: S3 calls the admin port without client authentication, as
// Ory documents. User tokens (S5, S6) come from the headless login and
// consent accept flow through the admin API (mintpool's admin-accept;
// loadstep's --login admin-accept times the same flow for S4): S6 measures
// userinfo for a user (Hydra also answers a client_credentials token, with
// no subject). Refresh tokens are single-use and rotated: each S5
// connection follows its own chain from one seed, as a real client does.
// Lifetimes are Hydra's defaults: access tokens 1 h, refresh tokens 720 h.
func hydraTable(st *product.State) product.Table {
	issuer, admin := st.Get("ISSUER"), st.Get("ADMIN_URL")
	token := issuer + "oauth2/token"
	client := product.BasicAuth(hydraClient, st.Secret(hydraClient))
	login := func(emit, mode string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: mode, Flow: "admin-accept", Args: slices.Concat(
			[]string{"--flow", "admin-accept", "--issuer", issuer, "--auth-url", issuer + "oauth2/auth", "--token-url", token,
				"--admin-url", admin, "--redirect-uri", hydraRedirect}, client,
			[]string{"--scope", hydraScope, "--subject", "user%d", "--users", hydraUsers, "-P", "8", "--emit", emit, "--product", "hydra"})}
	}
	return product.Table{
		Scenarios: map[string]product.Scenario{
			"discovery":          {Endpoint: issuer + ".well-known/openid-configuration"},
			"client_credentials": {Endpoint: token, Load: client},
			"introspect": {Endpoint: admin + "/admin/oauth2/introspect", Load: slices.Concat([]string{"--client-auth", "none"}, product.Reuse), TTL: 3600,
				Pool: &product.Pool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials", Args: slices.Concat(
					[]string{"--flow", "client_credentials", "--token-url", token}, client,
					[]string{"-P", "8", "--emit", "access_token", "--product", "hydra"})}},
			"auth_code": {Endpoint: issuer + "oauth2/auth", Load: slices.Concat([]string{"--login", "admin-accept", "--token-url", token,
				"--admin-url", admin, "--redirect-uri", hydraRedirect}, client,
				[]string{"--scope", hydraScope, "--username", "user%d", "--users", hydraUsers})},
			"refresh":  {Endpoint: token, Load: slices.Concat(client, product.Chain), TTL: 2592000, Pool: login("refresh_token", "chain")},
			"userinfo": {Endpoint: issuer + "userinfo", Load: product.Reuse, TTL: 3600, Pool: login("access_token", "reuse")},
		},
		Metrics: []string{"--server-metrics", admin + "/admin/metrics/prometheus"},
	}
}

// hydraReadback: the version (admin /version), the client secret's hashing
// and the access tokens' lifespan (its database), the token format and the
// connections it holds. In compose mode the database is the compose
// PostgreSQL's port on 127.0.0.1 (its password in secrets/pgpass, PGPASSFILE).
func hydraReadback(st *product.State) []string {
	return []string{"--admin-url", st.Get("ADMIN_URL"), "--postgres", st.PGDSN("hydra"), "--client-id", hydraClient,
		"--client-secret-file", st.Secret(hydraClient), "--token-url", st.Get("ISSUER") + "oauth2/token"}
}

// hydraSetup: "provision hydra" creates the client through the admin API,
// checks it with a client_credentials grant and writes its secret.
func hydraSetup(st *product.State) []string {
	return []string{"--admin-url", st.Get("ADMIN_URL"), "--issuer", st.Get("ISSUER"), "--out-dir", st.Path("secrets"),
		"--client-id", hydraClient, "--redirect-uri", hydraRedirect}
}

// hydraConfig is hydra.yml of native mode: public and admin on loopback,
// the login and consent URLs of no app (the headless flow accepts through
// the admin API), warn logs, no telemetry. No secrets: the system secret
// and the DSN come from the environment.
func hydraConfig(st *product.State) string {
	public, admin := st.Get("PUBLIC_PORT"), st.Get("ADMIN_PORT")
	return fmt.Sprintf(`serve:
  public:
    host: 127.0.0.1
    port: %[1]s
  admin:
    host: 127.0.0.1
    port: %[2]s
urls:
  self:
    issuer: http://127.0.0.1:%[1]s/
  login: http://127.0.0.1:9/login
  consent: http://127.0.0.1:9/consent
log:
  level: warn
sqa:
  opt_out: true
`, public, admin)
}

func hydraPart(in product.Inputs) schema.Meta {
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
		m.Settings["config"] = "serve all --dev, configured through the environment (products/hydra/compose.yml)"
		m.Settings["cold_start"] = "A: compose up on an empty database volume (migration job, then serve all); B: compose up on the kept volume (the migration job runs again and finds nothing to do)"
	}
	return m
}

// serverMetrics: Hydra v2.3.0's admin /admin/metrics/prometheus (ory/x
// prometheusx with the prefix http_ and the constant label app="hydra";
// endpoint = the request path with path parameters as {param}, method in
// lower case; read on the running server:
// testdata/hydra-v2.3.0.prom).
var serverMetrics = servermetrics.Product{
	Source: "Hydra v2.3.0 admin /admin/metrics/prometheus: http_requests_duration_seconds (histogram), labels app, code, method (lower case), endpoint",
	Scenarios: map[string]servermetrics.Selector{
		schema.ScenarioDiscovery:         series("get", "/.well-known/openid-configuration"),
		schema.ScenarioClientCredentials: series("post", "/oauth2/token"),
		schema.ScenarioRefresh:           series("post", "/oauth2/token"),
		schema.ScenarioIntrospect:        series("post", "/admin/oauth2/introspect"),
		schema.ScenarioUserinfo:          series("get", "/userinfo"),
	},
}

func series(method, endpoint string) servermetrics.Selector {
	return servermetrics.Selector{Family: "http_requests_duration_seconds",
		Match: map[string]string{"app": "hydra", "method": method, "endpoint": endpoint}, Status: "code"}
}
