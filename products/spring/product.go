// Package spring is everything idpbench knows of Spring Authorization
// Server: its entry (product.go), its readback (readback.go), its server
// (server/: a Spring Boot application configured as Spring's
// demo-authorizationserver sample, on PostgreSQL) and its adapter.
package spring

import (
	"slices"

	"github.com/idpbench/idpbench/internal/jdk"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is Spring Authorization Server under Spring Boot
// (products/spring/adapter), in the default run.
func Product() product.Product {
	return product.Product{
		Name:         "spring",
		InDefaultRun: true,
		Docs:         "docs/products/spring.md",
		NA: map[string]string{
			"jwt_bearer":               "Spring Authorization Server 7.0 has no RFC 7523 JWT authorization grant: its token endpoint takes authorization_code, client_credentials, refresh_token, device_code and token-exchange (JWTs only as client authentication); S2j is Zitadel's M2M path",
			"client_credentials_login": "Spring Authorization Server 7.0.6 answers userinfo for a client_credentials token (scope openid) with 401 invalid_token: its userinfo serves only authorizations that hold an ID token, and client_credentials issues none; S2l's rule wants a 2xx with a sub",
		},
		Params: []product.Param{
			{Name: "jdk", Doc: "the JDK the adapter found and ran (state.env JDK)"},
			{Name: "heap", Doc: "the heap options the adapter starts java with (SPRING_HEAP; state.env HEAP)"},
			{Name: "users", Doc: "the number of users configured (state.env USERS)"},
			{Name: "issuer", Doc: "the server's base URL (state.env ISSUER)"},
		},
		Part: springPart,
		MetaParams: func(st *product.State) []string {
			return []string{"jdk=" + st.Opt("JDK"), "heap=" + st.Opt("HEAP"), "users=" + st.Opt("USERS"), "issuer=" + st.Opt("ISSUER")}
		},
		ReadFacts:     readFacts,
		ReadFactsFrom: readFrom,
		ServerMetrics: serverMetrics,
		Answers:       &product.Answers{Table: springTable, Readback: springReadback, Start: springStart},
		JDK:           &jdk.Need{Min: 17, Prefer: 25, Why: "Spring Boot 4 runs on 17 and later; 25 is the JDK Keycloak runs on here, so the two JVM products share one"},
	}
}

// The benchmark's client and users as the server configures them at start
// (server/src/main/resources/application.properties and the arguments of
// springStart): one confidential client (client_secret_basic;
// authorization_code, refresh_token, client_credentials; scopes openid and
// profile; no consent), the users user0..user(USERS-1) sharing one
// generated password. Lifetimes: access tokens 1 h (set), refresh tokens
// 1 h (TokenSettings' default), reused (reuseRefreshTokens default true).
const (
	springClient    = "bench-svc"
	springRedirect  = "http://127.0.0.1/cb"
	springScope     = "openid profile"
	springDB        = "spring"
	springAccessS   = 3600
	springRefreshS  = 3600
	springDBPool    = "25"
	springBootVer   = "4.0.7"
	springUserCheck = "user%d"
)

// springTable: user tokens (S3 could use client tokens, S5 and S6 need a
// user) come from Spring Security's login page, driven by mintpool's
// form-page: the authorization request redirects to /login, the form posts
// back to /login, which redirects to the saved authorization request, which
// redirects to the client with the code (internal/login/formlogin, PageHop).
// S3 introspects client_credentials tokens with the same client's Basic
// credentials. Refresh tokens are reused (not rotated) by default: S5
// reuses its pool.
func springTable(st *product.State) product.Table {
	issuer := st.Get("ISSUER")
	token := issuer + "/oauth2/token"
	client := product.BasicAuth(springClient, st.Secret(springClient))
	users := []string{"--username", springUserCheck, "--users", st.Get("USERS"), "--password-file", st.Secret("users-password")}
	login := func(emit string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: "reuse", Flow: "form-page", Args: slices.Concat(
			[]string{"--flow", "form-page", "--token-url", token, "--auth-url", issuer + "/oauth2/authorize"}, client,
			[]string{"--redirect-uri", springRedirect, "--scope", springScope}, users,
			[]string{"--emit", emit, "-P", "8", "--product", "spring"})}
	}
	return product.Table{
		Scenarios: map[string]product.Scenario{
			"discovery":          {Endpoint: issuer + "/.well-known/openid-configuration"},
			"client_credentials": {Endpoint: token, Load: client},
			"introspect": {Endpoint: issuer + "/oauth2/introspect", Load: slices.Concat(client, product.Reuse), TTL: springAccessS,
				Pool: &product.Pool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials", Args: slices.Concat(
					[]string{"--flow", "client_credentials", "--token-url", token}, client,
					[]string{"-P", "8", "--emit", "access_token", "--product", "spring"})}},
			"auth_code": {Endpoint: issuer + "/oauth2/authorize", Load: slices.Concat([]string{"--login", "form-page", "--token-url", token,
				"--redirect-uri", springRedirect}, client, []string{"--scope", springScope}, users)},
			"refresh":  {Endpoint: token, Load: slices.Concat(client, product.Reuse), TTL: springRefreshS, Pool: login("refresh_token")},
			"userinfo": {Endpoint: issuer + "/userinfo", Load: product.Reuse, TTL: springAccessS, Pool: login("access_token")},
		},
		Metrics: []string{"--server-metrics", st.Get("MGMT_URL") + "/prometheus"},
	}
}

// springReadback: the versions (actuator /info), the client's row (secret
// hashing, token settings), the tables, the JVM and the Hikari pool
// (actuator /prometheus), the token lifespan from a client_credentials
// grant.
func springReadback(st *product.State) []string {
	return []string{"--admin-url", st.Get("MGMT_URL"), "--metrics", st.Get("MGMT_URL") + "/prometheus",
		"--postgres", st.PGDSN(springDB), "--client-id", springClient, "--client-secret-file", st.Secret(springClient),
		"--token-url", st.Get("ISSUER") + "/oauth2/token"}
}

// springStart is java's arguments after the heap: the jar and the run's
// values as Spring Boot command-line properties (ports, the database, the
// secret files' paths; the secrets stay in the files).
func springStart(st *product.State) []string {
	return []string{"-jar", st.Get("JAR"), "--server.port=" + st.Get("HTTP_PORT"),
		"--management.server.port=" + st.Get("MGMT_PORT"),
		"--spring.datasource.url=jdbc:postgresql://127.0.0.1:" + st.PGPort() + "/" + springDB,
		"--idpbench.users=" + st.Get("USERS"),
		"--idpbench.client-secret-file=" + st.Secret(springClient),
		"--idpbench.user-password-file=" + st.Secret("users-password")}
}

func springPart(in product.Inputs) schema.Meta {
	return schema.Meta{
		Settings: map[string]string{
			"version":         in.Version + " (spring-security-oauth2-authorization-server, as spring-boot-starter-parent " + springBootVer + " resolves it)",
			"spring_boot":     springBootVer,
			"jdk":             in.P("jdk"),
			"heap":            in.P("heap"),
			"server":          "products/spring/server: Spring Boot, embedded Tomcat on 127.0.0.1 (server.address), actuator on its own port on 127.0.0.1",
			"issuer":          in.P("issuer") + " (AuthorizationServerSettings default: resolved from the request)",
			"stores":          "JdbcRegisteredClientRepository, JdbcOAuth2AuthorizationService, JdbcOAuth2AuthorizationConsentService on PostgreSQL (database " + springDB + ")",
			"db_pool":         "HikariCP maximum-pool-size=minimum-idle=" + springDBPool,
			"access_tokens":   "self-contained (JWT, RS256; TokenSettings default), " + "1 h",
			"refresh_tokens":  "1 h, reused (TokenSettings defaults)",
			"signing_key":     "one RSA 2048 key generated at each start, in memory (as the sample)",
			"login":           "Spring Security's default form login page at /login; users in memory (InMemoryUserDetailsManager)",
			"users":           in.P("users") + " (user0..; one shared password)",
			"password_hashes": "client secret and user password stored {bcrypt} (PasswordEncoderFactories.createDelegatingPasswordEncoder, cost 10)",
			"metrics":         "actuator /actuator/prometheus (Micrometer), http.server.requests with histogram buckets",
		},
		ConfigSources: []schema.Link{
			{What: "the demo-authorizationserver sample", URL: "https://github.com/spring-projects/spring-authorization-server/tree/main/samples/demo-authorizationserver"},
			{What: "the sample's AuthorizationServerConfig", URL: "https://github.com/spring-projects/spring-authorization-server/blob/main/samples/demo-authorizationserver/src/main/java/sample/config/AuthorizationServerConfig.java"},
			{What: "Spring Authorization Server reference: getting started", URL: "https://docs.spring.io/spring-security/reference/servlet/oauth2/authorization-server/getting-started.html"},
			{What: "Spring Authorization Server reference: core model and components (JDBC services, TokenSettings)", URL: "https://docs.spring.io/spring-security/reference/servlet/oauth2/authorization-server/core-model-components.html"},
			{What: "Spring Boot actuator: metrics and the Prometheus endpoint", URL: "https://docs.spring.io/spring-boot/reference/actuator/metrics.html"},
			{What: "Spring Security password storage (DelegatingPasswordEncoder)", URL: "https://docs.spring.io/spring-security/reference/features/authentication/password-storage.html"},
		},
		Deviations: []schema.Note{
			{What: "PostgreSQL instead of the sample's embedded H2; the jar's three schema files with blob as text and timestamp as timestamptz, CREATE TABLE IF NOT EXISTS (server/src/main/resources/idpbench/schema-postgresql.sql)",
				Why: "the benchmark runs every product on the same PostgreSQL; the two type changes are the ones the schema files themselves prescribe for PostgreSQL; IF NOT EXISTS lets a restart (cold start B) keep the first start's tables"},
			{What: "one client, bench-svc, with a per-run secret from a file stored {bcrypt}; the sample's clients (messaging-client {noop}secret, device, token-exchange, mTLS) are not registered",
				Why: "the scenarios need one confidential client; the sample's {noop} secret is re-encoded {bcrypt} by the framework at its first authentication anyway (ClientSecretAuthenticationProvider's upgradeEncoding), so storing {bcrypt} at start moves that one hash before the measurement"},
			{What: "requireAuthorizationConsent false (the sample's messaging-client: true, with a custom consent page)",
				Why: "the headless login drivers answer no consent page; Keycloak and Hydra log in without consent here too"},
			{What: "Spring Security's default login page, 100 users with one per-run password stored {bcrypt} (the sample: its Thymeleaf login page with Google and GitHub federation, one user by User.withDefaultPasswordEncoder)",
				Why: "federation needs external IdPs; the default page is the framework's own form login, which internal/login/formlogin drives"},
			{What: "access token time-to-live 1 h (TokenSettings default: 5 min)",
				Why: "token pools are minted once and must stay valid through the ladders and the GC-jitter run; Keycloak and Hydra issue 1-hour access tokens here too"},
			{What: "plain http on 127.0.0.1 (the sample: TLS on port 9443 with its keystore)",
				Why: "loopback benchmark: TLS would measure the TLS stack; every product is called over plain http"},
			{What: "actuator with the Prometheus endpoint and http.server.requests histogram buckets on a second loopback port",
				Why: "the report's server-side figures and readback's JVM and pool facts; the sample has no actuator"},
			{What: "the JDBC client repository's lookups by id cached in memory (CachingRegisteredClientRepository; lookups by client_id, which client authentication makes, still read the database)",
				Why: "JdbcOAuth2AuthorizationService and JdbcOAuth2AuthorizationConsentService call RegisteredClientRepository.findById inside their row mappers (checked in the 7.0.6 bytecode) while their query holds a pooled connection, so with more concurrent token lookups than pool connections every one waits for a second connection until Hikari's 30 s timeout (spring-attic/spring-authorization-server#1257, open): as the sample configures it, S6 stalled at 32 connections (0 requests in the window, 0% CPU in the JVM and PostgreSQL) and the run lost the server; with the cache, S6 ran at 64 and 128 connections with no error and no pool timeout"},
			{What: "HikariCP pool 25 (minimum-idle = maximum-pool-size; Boot's default maximum 10)",
				Why: "an explicit, recorded pool of the same size as the other products"},
			{What: "heap " + in.P("heap"),
				Why: "no official sizing exists for a Spring Boot server; Keycloak's heap (its official 2 GB small-production rule), so both JVM products run at one size"},
		},
		Known: []schema.Known{{
			Scenario: "userinfo",
			What:     "Spring Authorization Server's JDBC authorization and consent services look the client up by id while their own query holds a pooled connection: more concurrent token lookups (userinfo, introspection, refresh, code exchange) than pool connections deadlock the pool until its timeout. Avoided here by caching the client repository's lookups by id (a deviation); as the sample configures it, S6 stalled at 32 connections on a pool of 25.",
			Ref:      "https://github.com/spring-attic/spring-authorization-server/issues/1257",
		}},
		Notes: []string{
			"Access tokens are self-contained JWTs, but the framework stores every authorization (with its token values) in oauth2_authorization and looks tokens up there: introspection, userinfo and refresh read the database, and every client_credentials grant writes a row.",
			"The jar's schema has no index but the primary keys, so a token lookup scans oauth2_authorization; the table grows with every grant of a run.",
			"S3 introspects client_credentials tokens; S5 reuses refresh tokens (not rotated by default); S5 and S6 tokens come from the form login (mintpool form-page), spread over the users.",
			"Every request that authenticates the client (S2, S3, S5 and S4's code exchange) checks its secret against the stored {bcrypt} hash, cost 10: about 350 ms of CPU per check measured on this machine under a load average of 16 (Spring Security's BCryptPasswordEncoder.matches, JDK 25), so bcrypt dominates those scenarios, as PBKDF2 does Hydra's S2; Keycloak keeps client secrets in plain. The sample's {noop} would not avoid it: ClientSecretAuthenticationProvider re-encodes a secret whose encoding is not the default one ({bcrypt}) at its first successful authentication and saves the client (7.0.6 bytecode; seen here: a client saved {noop} read {bcrypt} after one grant).",
			"Users live in memory (InMemoryUserDetailsManager, as the sample's); only the client, authorizations and consents are in PostgreSQL.",
			"Cold start A: first start on an empty database (schema creation, the client's row); B restarts on it. Both are timed to the actuator's /actuator/health answering 200.",
		},
	}
}

// serverMetrics: the actuator's /actuator/prometheus (Micrometer's
// http_server_requests_seconds with percentiles-histogram on). The
// authorization server's endpoints are servlet filters, not MVC handlers,
// so Micrometer names no template for them: uri is UNKNOWN for every one
// that answers 2xx (REDIRECTION for 3xx). A series is one scenario's
// because a load step measures one scenario at a time, and the scrapes go
// to the management port, which this registry does not count. Read on the
// running server: testdata/spring-7.0.6.prom.
var serverMetrics = servermetrics.Product{
	Source: "Spring Authorization Server 7.0.6 (Boot 4.0.7) actuator /actuator/prometheus: http_server_requests_seconds (histogram with percentiles-histogram), labels error, exception, method, outcome, status, uri (UNKNOWN for every authorization-server endpoint: they are filters; one scenario per load step)",
	Scenarios: map[string]servermetrics.Selector{
		schema.ScenarioDiscovery:         series("GET"),
		schema.ScenarioClientCredentials: series("POST"),
		schema.ScenarioRefresh:           series("POST"),
		schema.ScenarioIntrospect:        series("POST"),
		schema.ScenarioUserinfo:          series("GET"),
	},
}

func series(method string) servermetrics.Selector {
	return servermetrics.Selector{Family: "http_server_requests_seconds",
		Match: map[string]string{"method": method, "uri": "UNKNOWN"}, Status: "status"}
}
