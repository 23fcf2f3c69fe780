package keycloak

import (
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/jdk"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is Keycloak in production mode (products/keycloak/adapter).
func Product() product.Product {
	return product.Product{
		Name:         "keycloak",
		InDefaultRun: true,
		Provision:    &provisionCommand,
		Docs:         "docs/products/keycloak.md",
		ComposeFile:  "products/keycloak/compose.yml",
		NA: map[string]string{
			"jwt_bearer": "Keycloak has no RFC 7523 JWT authorization grant in its default configuration (S2j is Zitadel's M2M path)",
		},
		Params: []product.Param{
			{Name: "jdk", Doc: "the JDK the adapter found and ran (state.env JDK; empty in compose mode)"},
			{Name: "heap", Doc: "JAVA_OPTS_KC_HEAP as the adapter set it (state.env HEAP)"},
			{Name: "build", Doc: "the options of kc.sh build (state.env BUILD)"},
			{Name: "base_url", Doc: "the hostname Keycloak was started with (state.env BASE_URL)"},
			{Name: "users", Doc: "the number of users provisioned (state.env USERS)"},
		},
		Part: keycloakPart,
		MetaParams: func(st *product.State) []string {
			return []string{"jdk=" + st.Opt("JDK"), "heap=" + st.Opt("HEAP"), "build=" + st.Opt("BUILD"),
				"base_url=" + st.Opt("BASE_URL"), "users=" + st.Opt("USERS")}
		},
		ReadFacts:     readFacts,
		ReadFactsFrom: readFrom,
		ServerMetrics: serverMetrics,
		Answers: &product.Answers{Table: keycloakTable, Readback: keycloakReadback, Setup: keycloakSetup,
			Start: keycloakStart},
		JDK: &jdk.Need{Min: 21, Prefer: 25, WarnCPUs: 2, Why: "JDK 21 has virtual-thread deadlocks on hosts with <= 2 cores"},
	}
}

// Keycloak's realm and client as "provision keycloak" creates them: realm
// bench, with an access token lifespan long enough for a pool minted
// before a ladder or the GC-jitter run; one confidential client
// (client_secret_basic; client_credentials, password and
// authorization_code; an audience mapper so it can introspect its own
// tokens); the users user0..user(USERS-1) sharing one generated password.
// The database pool is the other products' size, initial = min = max.
const (
	keycloakRealm     = "bench"
	keycloakClient    = "bench-svc"
	keycloakRedirect  = "http://127.0.0.1/cb"
	keycloakAdmin     = "admin" // the bootstrap admin
	keycloakLifespanS = 3600
	// keycloakSessionIdleS is the realm's SSO Session Idle, Keycloak's
	// default (the realm leaves it): a password login's session ends when it
	// has idled this long, and with it its refresh token and every access
	// token the userinfo endpoint checks against it, whatever the access
	// token's lifespan. Using the tokens does not keep it alive (results/
	// full-2026-12-06-j: a userinfo pool minted 37 minutes before the
	// closing answered 401 to every request).
	keycloakSessionIdleS = 1800
	DBPool               = 25
	keycloakDB           = "keycloak"
)

// keycloakTable: user tokens (S5, S6) come from the password grant, the
// only headless way Keycloak issues them; each login hashes the password
// (Argon2id by default since Keycloak 25; the facts read which), so the
// logins spread over the users. S4 drives the login form: GET the
// authorize URL, POST the form's action with a user's password, follow to
// the code. With scope openid Keycloak answers userinfo for the service
// account with its subject (S2l). Refresh tokens are reusable by default
// (revokeRefreshToken=false): S5 reuses its pool. Lifetimes: the realm's
// access token lifespan, but a user token (S5's refresh tokens, S6's
// access tokens) only as long as its login's SSO session, which ends after
// 30 idle minutes (keycloakSessionIdleS): the ladder remints those pools
// before then. Metrics: the management interface's
// /metrics (metrics-enabled at build, the request histograms at start).
func keycloakTable(st *product.State) product.Table {
	issuer := st.Get("ISSUER")
	token := issuer + "/protocol/openid-connect/token"
	client := product.BasicAuth(keycloakClient, st.Secret(keycloakClient))
	users := []string{"--username", "user%d", "--users", st.Get("USERS"), "--password-file", st.Secret("users-password")}
	password := func(emit string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: "reuse", Flow: "password", Args: slices.Concat(
			[]string{"--flow", "password", "--token-url", token}, client, users,
			[]string{"--scope", "openid", "-P", "8", "--emit", emit, "--product", "keycloak"})}
	}
	lifespan := keycloakLifespanS
	return product.Table{
		Scenarios: map[string]product.Scenario{
			"discovery":          {Endpoint: issuer + "/.well-known/openid-configuration"},
			"client_credentials": {Endpoint: token, Load: client},
			"client_credentials_login": {Endpoint: token, Load: slices.Concat(client,
				[]string{"--userinfo-url", issuer + "/protocol/openid-connect/userinfo", "--scope", "openid"})},
			"introspect": {Endpoint: token + "/introspect", Load: slices.Concat(client, product.Reuse), TTL: lifespan,
				Pool: &product.Pool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials", Args: slices.Concat(
					[]string{"--flow", "client_credentials", "--token-url", token}, client,
					[]string{"-P", "8", "--emit", "access_token", "--product", "keycloak"})}},
			"auth_code": {Endpoint: issuer + "/protocol/openid-connect/auth", Load: slices.Concat(client,
				[]string{"--login", "form", "--token-url", token, "--redirect-uri", keycloakRedirect, "--scope", "openid"}, users)},
			"refresh":  {Endpoint: token, Load: slices.Concat(client, product.Reuse), TTL: keycloakSessionIdleS, Pool: password("refresh_token")},
			"userinfo": {Endpoint: issuer + "/protocol/openid-connect/userinfo", Load: product.Reuse, TTL: min(lifespan, keycloakSessionIdleS), Pool: password("access_token")},
		},
		Metrics: []string{"--server-metrics", "http://127.0.0.1:" + st.Get("MGMT_PORT") + "/metrics"},
	}
}

// keycloakReadback: Keycloak's version, its users' password hashing and the
// realm's token and session settings from its database; the JVM, its heap
// and the Agroal pool from the management /metrics; the token lifespan and
// format from a client_credentials grant. In compose mode the database is
// the compose PostgreSQL's port on 127.0.0.1 (its password in
// secrets/pgpass, PGPASSFILE).
func keycloakReadback(st *product.State) []string {
	return []string{"--postgres", st.PGDSN(keycloakDB), "--realm", keycloakRealm,
		"--metrics", "http://127.0.0.1:" + st.Get("MGMT_PORT") + "/metrics",
		"--token-url", st.Get("ISSUER") + "/protocol/openid-connect/token", "--client-id", keycloakClient,
		"--client-secret-file", st.Secret(keycloakClient)}
}

// keycloakSetup: "provision keycloak" creates, through the admin REST API,
// the realm, the client with its audience mapper and the users, checks one
// request of each measured kind and writes the client secret and the
// users' password.
func keycloakSetup(st *product.State) []string {
	return []string{"--base-url", st.Get("BASE_URL"), "--admin-user", keycloakAdmin,
		"--admin-password-file", st.Secret("admin"), "--out-dir", st.Path("secrets"), "--realm", keycloakRealm,
		"--access-token-lifespan", strconv.Itoa(keycloakLifespanS) + "s", "--client-id", keycloakClient,
		"--redirect-uri", keycloakRedirect, "--users", st.Get("USERS"), "--username", "user%d"}
}

// keycloakStart is kc.sh's arguments in native mode, the same for both cold
// starts: production mode on the optimized build, the database pool, http
// and the management interface on loopback, the clustered cache bound to
// loopback, the request histograms the server-side percentiles come from.
// The passwords travel in the environment.
func keycloakStart(st *product.State) []string {
	http, pool := st.Get("HTTP_PORT"), strconv.Itoa(DBPool)
	return []string{"start", "--optimized",
		"--db-url=jdbc:postgresql://127.0.0.1:" + st.PGPort() + "/" + keycloakDB, "--db-username=" + product.PGUser,
		"--db-pool-initial-size=" + pool, "--db-pool-min-size=" + pool, "--db-pool-max-size=" + pool,
		"--http-enabled=true", "--http-host=127.0.0.1", "--http-port=" + http,
		"--http-management-host=127.0.0.1", "--http-management-port=" + st.Get("MGMT_PORT"),
		"--hostname=http://127.0.0.1:" + http,
		"--cache-embedded-network-bind-address=127.0.0.1", "--http-metrics-histograms-enabled=true"}
}

func keycloakPart(in product.Inputs) schema.Meta {
	heap, pool, at := in.P("heap"), strconv.Itoa(DBPool), strconv.Itoa(keycloakLifespanS)
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
			"audience_mapper":               "oidc-audience-mapper adds " + keycloakClient + " to access tokens and introspection",
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
			"SSO session timeouts stay at their defaults: the user-token pools (S5's refresh tokens, S6's access tokens) are reminted by the ladder before the 30-minute idle timeout ends their sessions; an S6 pool kept for its access token's hour answered 401 in every closing before 2026-12-06 (results/full-2026-12-06-j).",
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
	m.Settings["jdk"] = "the image's: JDK 21 in the official quay.io/keycloak/keycloak 26.7, native mode's in its local equivalent (idpbench/keycloak:VERSION-local, scripts/lib/images.sh); the JVM fact, read back, names the one that ran"
	m.Settings["heap"] = "container default: -XX:MaxRAMPercentage=70 -XX:InitialRAMPercentage=50 of the 2G memory limit (about 1434 MiB max)"
	m.Settings["start"] = "start --optimized in the optimized image (products/keycloak/Dockerfile)"
	m.Settings["cache"] = "ispn (production default), bound inside the container network"
	m.Deviations = slices.DeleteFunc(m.Deviations, func(d schema.Note) bool {
		return strings.HasPrefix(d.What, "JAVA_OPTS_KC_HEAP") || strings.HasPrefix(d.What, "--cache-embedded")
	})
}

// serverMetrics: Keycloak 26.7.3's management /metrics with
// --http-metrics-histograms-enabled=true (Micrometer's
// http_server_requests_seconds, uri = the JAX-RS path template with the
// sub-resource locators' parameters: {realm}, {protocol}, {alias}; read on
// the running server: testdata/keycloak-26.7.3-summary.prom).
var serverMetrics = servermetrics.Product{
	Source: "Keycloak 26.7.3 management /metrics: http_server_requests_seconds (histogram with --http-metrics-histograms-enabled=true), labels method, outcome, status, uri",
	Scenarios: map[string]servermetrics.Selector{
		schema.ScenarioDiscovery:         series("GET", "/realms/{realm}/.well-known/{alias}"),
		schema.ScenarioClientCredentials: series("POST", "/realms/{realm}/protocol/{protocol}/token"),
		schema.ScenarioRefresh:           series("POST", "/realms/{realm}/protocol/{protocol}/token"),
		schema.ScenarioIntrospect:        series("POST", "/realms/{realm}/protocol/{protocol}/token/introspect"),
		schema.ScenarioUserinfo:          series("GET", "/realms/{realm}/protocol/{protocol}/userinfo"),
	},
}

func series(method, uri string) servermetrics.Selector {
	return servermetrics.Selector{Family: "http_server_requests_seconds",
		Match: map[string]string{"method": method, "uri": uri}, Status: "status"}
}
