package products

import (
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// Keycloak is Keycloak in production mode (scripts/products/keycloak).
func Keycloak() Product {
	return Product{
		Name: "keycloak",
		NA: map[string]string{
			"jwt_bearer": "Keycloak has no RFC 7523 JWT authorization grant in its default configuration (S2j is Zitadel's M2M path)",
		},
		Params: []Param{
			{"jdk", "the JDK the adapter found and ran (state.env JDK; empty in compose mode)"},
			{"heap", "JAVA_OPTS_KC_HEAP as the adapter set it"},
			{"db_pool", "the database pool size (initial = min = max)"},
			{"build", "the options of kc.sh build"},
			{"base_url", "the hostname Keycloak was started with (state.env BASE_URL)"},
			{"users", "the number of users provisioned"},
			{"client", "the confidential client the audience mapper adds"},
			{"access_token_lifespan_s", "the realm's accessTokenLifespan, seconds"},
		},
		Part: keycloakPart,
	}
}

func keycloakPart(in Inputs) schema.Meta {
	heap, pool, at := in.P("heap"), in.P("db_pool"), in.P("access_token_lifespan_s")
	m := schema.Meta{
		Settings: map[string]string{
			"version":                       in.Version,
			"jdk":                           in.P("jdk"),
			"heap":                          "JAVA_OPTS_KC_HEAP=" + heap,
			"db_pool":                       "initial=min=max=" + pool,
			"build":                         "kc.sh build " + in.P("build"),
			"start":                         "kc.sh start --optimized (production mode)",
			"cache":                         "ispn (production default): a one-node embedded Infinispan cluster, jdbc-ping discovery, JGroups on 127.0.0.1:7800 (failure detection :57800)",
			"hostname":                      in.P("base_url"),
			"http":                          "http and the management interface on 127.0.0.1 (--http-host, --http-management-host), no TLS",
			"audience_mapper":               "oidc-audience-mapper adds " + in.P("client") + " to access tokens and introspection",
			"realm_access_token_lifespan_s": at,
			"users":                         in.P("users") + " (user0..; one shared password)",
		},
		ConfigSources: []schema.Link{
			{What: "configuring Keycloak for production", URL: "https://www.keycloak.org/server/configuration-production"},
			{What: "memory and CPU sizing (2 GB limit, heap 70%)", URL: "https://www.keycloak.org/high-availability/concepts-memory-and-cpu-sizing"},
			{What: "database configuration and connection pool", URL: "https://www.keycloak.org/server/db"},
			{What: "running in a container (heap defaults)", URL: "https://www.keycloak.org/server/containers"},
			{What: "audience support (hardcoded audience mapper)", URL: "https://www.keycloak.org/docs/latest/server_admin/#audience-support"},
			{What: "admin REST API", URL: "https://www.keycloak.org/docs-api/latest/rest-api/index.html"},
		},
		Deviations: []schema.Note{
			{What: "--http-enabled=true on 127.0.0.1, no TLS", Why: "loopback benchmark: TLS would measure the TLS stack, not the IdP; every product is called over plain http"},
			{What: "--cache-embedded-network-bind-address=127.0.0.1 (default: a site-local address)", Why: "the benchmark listens on loopback only; the clustered cache itself stays the production default"},
			{What: "JAVA_OPTS_KC_HEAP=" + heap, Why: "kc.sh outside a container defaults to -Xms64m -Xmx512m; this is the official container rule (heap = 70% of the memory limit) applied to the official small-production limit of 2 GB"},
			{What: "realm accessTokenLifespan " + at + " s (default 300 s)", Why: "token pools are minted once and must stay valid through the ladders and the GC-jitter run (a pool is reminted before its tokens expire; with 300 s that is every few minutes, and each userinfo or refresh pool costs 256 password logins, each an Argon2id hash); Hydra also issues 1-hour access tokens"},
			{What: "audience mapper on bench-svc", Why: "Keycloak 26.7 introspection answers active:false when the introspecting client is not in the token audience; the mapper is the documented way to add it"},
			{What: "--db-pool-initial-size=min-size=max-size=" + pool, Why: "an explicit, recorded pool of the same size as the other products (Keycloak default: max 100)"},
			{What: "--http-metrics-histograms-enabled=true (runtime option; default false)", Why: "the server-side latency percentiles of the report come from the buckets of http_server_requests_seconds, which Keycloak exposes only with this option (without it, a count and a sum); it adds a histogram update per request"},
		},
		Notes: []string{
			"S5 reuses refresh tokens: Keycloak does not rotate them by default (revokeRefreshToken=false), unlike Hydra, whose single-use tokens are rotated (S5 follows each chain there). Same request, different server-side bookkeeping.",
			"S5/S6 tokens come from the password grant (direct access grants) with scope openid, spread over the users; each login hashes the password (the hashing in force is among the facts, read from the credential table), so pool minting is slow.",
			"S6 needs a user token: userinfo answers 403 to a client_credentials token.",
			"SSO session timeouts stay at their defaults: refresh-token pools are reminted by the ladder long before the idle timeout.",
			"Cold start A is the first kc.sh start --optimized on an empty database (schema creation, master realm, bootstrap admin); B restarts it on that database. Both are timed to the management port /health/ready.",
		},
	}
	if in.Compose() {
		keycloakCompose(&m)
	}
	return m
}

// keycloakCompose: the image's JDK and the container heap rule replace the
// native settings that kc.sh outside a container needs (and their
// deviations).
func keycloakCompose(m *schema.Meta) {
	m.Settings["jdk"] = "the image's (quay.io/keycloak/keycloak; JDK 21 in 26.7)"
	m.Settings["heap"] = "container default: -XX:MaxRAMPercentage=70 -XX:InitialRAMPercentage=50 of the 2G memory limit (about 1434 MiB max)"
	m.Settings["start"] = "start --optimized in the optimized image (deploy/compose/keycloak/Dockerfile)"
	m.Settings["cache"] = "ispn (production default), bound inside the container network"
	m.Deviations = slices.DeleteFunc(m.Deviations, func(d schema.Note) bool {
		return strings.HasPrefix(d.What, "JAVA_OPTS_KC_HEAP") || strings.HasPrefix(d.What, "--cache-embedded")
	})
}
