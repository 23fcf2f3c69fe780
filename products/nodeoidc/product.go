// Package nodeoidc is panva's oidc-provider for Node.js
// (products/nodeoidc/server, run by products/nodeoidc/adapter) on the
// run's PostgreSQL.
package nodeoidc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is oidc-provider 9 under products/nodeoidc/server, in the
// default run.
func Product() product.Product {
	return product.Product{
		Name:         "nodeoidc",
		InDefaultRun: true,
		Docs:         "docs/products/nodeoidc.md",
		NA: map[string]string{
			"jwt_bearer":               "oidc-provider 9 has no RFC 7523 JWT authorization grant; it is an extension a deployment registers itself (registerGrantType), not part of the documented configuration (S2j is Zitadel's M2M path)",
			"client_credentials_login": "oidc-provider's userinfo accepts only access tokens of a user's grant: a client_credentials token (its ClientCredentials model) answers 401 invalid_token, where S2l's rule wants a 2xx with a sub",
		},
		Part:          nodeoidcPart,
		ReadFacts:     readFacts,
		ReadFactsFrom: readFrom,
		ServerMetrics: servermetrics.Product{NA: "oidc-provider exposes no metrics endpoint (it emits events for a deployment to count); this server adds none"},
		Answers:       &product.Answers{Table: nodeoidcTable, Readback: nodeoidcReadback},
	}
}

// The server's one client (products/nodeoidc/server/server.js: a static
// client, client_secret_basic; client_credentials, authorization_code,
// refresh_token), the redirect URI of its headless logins (nothing listens
// there), the scope of a user's login and the users user0..user99.
const (
	nodeoidcClient   = "bench-svc"
	nodeoidcRedirect = "http://127.0.0.1/cb"
	nodeoidcScope    = "openid offline_access"
	nodeoidcUsers    = "100"
)

// The token lifetimes in force, s: the module's documented defaults, set
// explicitly in server.js (and read back from its /config).
const (
	ttlAccessToken       = 3600
	ttlClientCredentials = 600
	ttlRefreshToken      = 14 * 24 * 3600
)

// nodeoidcTable: S3 introspects client_credentials tokens with the same
// client's Basic credentials (oidc-provider's default allowedPolicy lets a
// confidential client introspect any token). User tokens (S5, S6) come
// from the login form (mintpool's form-page: authorize -> 303 to the
// interaction page -> the form -> 303 to the resume -> 303 to the client
// with the code), S4 times the same hops. The authorization request says
// prompt=consent: oidc-provider drops offline_access from a request
// without it (OpenID Connect Core 1.0, 11; lib/actions/authorization/
// scopes.js), and without offline_access it issues no refresh token (the
// default issueRefreshToken); the login's result grants the consent. Refresh tokens of a confidential
// client are not rotated until 70% of their life has passed (the default
// rotateRefreshToken): S5 reuses its pool.
func nodeoidcTable(st *product.State) product.Table {
	issuer := strings.TrimSuffix(st.Get("ISSUER"), "/")
	token, auth := issuer+"/token", issuer+"/auth?prompt=consent"
	client := product.BasicAuth(nodeoidcClient, st.Secret(nodeoidcClient))
	users := []string{"--username", "user%d", "--users", nodeoidcUsers, "--password-file", st.Secret("users-password")}
	login := func(emit string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: "reuse", Flow: "form-page", Args: slices.Concat(
			[]string{"--flow", "form-page", "--token-url", token, "--auth-url", auth}, client,
			[]string{"--redirect-uri", nodeoidcRedirect, "--scope", nodeoidcScope}, users,
			[]string{"--emit", emit, "-P", "8", "--product", "nodeoidc"})}
	}
	return product.Table{Scenarios: map[string]product.Scenario{
		"discovery":          {Endpoint: issuer + "/.well-known/openid-configuration"},
		"client_credentials": {Endpoint: token, Load: client},
		"introspect": {Endpoint: token + "/introspection", Load: slices.Concat(client, product.Reuse), TTL: ttlClientCredentials,
			Pool: &product.Pool{Kind: "access_token", Mode: "reuse", Flow: "client_credentials", Args: slices.Concat(
				[]string{"--flow", "client_credentials", "--token-url", token}, client,
				[]string{"-P", "8", "--emit", "access_token", "--product", "nodeoidc"})}},
		"auth_code": {Endpoint: auth, Load: slices.Concat([]string{"--login", "form-page", "--token-url", token,
			"--redirect-uri", nodeoidcRedirect, "--scope", nodeoidcScope}, client, users)},
		"refresh":  {Endpoint: token, Load: slices.Concat(client, product.Reuse), TTL: ttlRefreshToken, Pool: login("refresh_token")},
		"userinfo": {Endpoint: issuer + "/me", Load: product.Reuse, TTL: ttlAccessToken, Pool: login("access_token")},
	}}
}

// nodeoidcReadback: the server's configuration in force (its admin
// listener's /config: the module's version, lifetimes, client, keys, pool),
// the tables in its database, the connections it holds, and the access
// tokens' lifespan and format from a client_credentials grant.
func nodeoidcReadback(st *product.State) []string {
	return []string{"--admin-url", "http://127.0.0.1:" + st.Get("ADMIN_PORT"), "--postgres", st.PGDSN(nodeoidcDB),
		"--token-url", strings.TrimSuffix(st.Get("ISSUER"), "/") + "/token", "--client-id", nodeoidcClient,
		"--client-secret-file", st.Secret(nodeoidcClient)}
}

// nodeoidcDB is its database on the run's PostgreSQL; DBPool the size of
// its node-postgres pool (the other products' size).
const (
	nodeoidcDB = "nodeoidc"
	DBPool     = 25
)

func nodeoidcPart(in product.Inputs) schema.Meta {
	const src = "https://github.com/panva/node-oidc-provider/blob/v9.13.3/"
	return schema.Meta{
		Settings: map[string]string{
			"server":       "products/nodeoidc/server: oidc-provider 9.13.3 and pg 8.23.1 (package-lock.json, npm ci), one Node process (NODE_ENV=production), bound to 127.0.0.1",
			"storage":      "PostgreSQL through products/nodeoidc/server/pg_adapter.js: one table per model (oidc_<model>), payload jsonb",
			"db_pool":      "node-postgres Pool max " + strconv.Itoa(DBPool) + " (its defaults otherwise: opened on demand, an idle connection closed after 10 s)",
			"client":       nodeoidcClient + ": static, client_secret_basic; client_credentials, authorization_code, refresh_token",
			"users":        "user0..user99, one password generated per run, checked by the server's login route",
			"features":     "clientCredentials, introspection, userinfo on; devInteractions off (the server's own login form instead); everything else the module's default",
			"token_format": "opaque (the default: no resource server is configured, so no JWT access tokens)",
			"ttl":          "the documented defaults, set explicitly: AccessToken 3600 s, ClientCredentials 600 s, RefreshToken 14 d, IdToken 3600 s, AuthorizationCode 60 s, Session and Grant 14 d",
			"cold_start":   "A: the first start on an empty database (the server creates its tables, then listens); B: a restart on them",
		},
		ConfigSources: []schema.Link{
			{What: "oidc-provider documentation (configuration, features, adapter, interactions)", URL: src + "docs/README.md"},
			{What: "the adapter interface", URL: src + "example/my_adapter.js"},
			{What: "the example's interaction routes (login, consent)", URL: src + "example/routes/koa.js"},
			{What: "the example sequelize adapter (one table per model, JSON payload)", URL: src + "example/adapters/sequelize.js"},
			{What: "the module's defaults (TTLs, pkce.required, issueRefreshToken, rotateRefreshToken)", URL: src + "lib/helpers/defaults.js"},
		},
		Deviations: []schema.Note{
			{What: "the models in PostgreSQL through idpbench's adapter (pg_adapter.js), not the default in-memory adapter",
				Why: "the module's in-memory adapter is for development only (it says so at start); every product here keeps its state in the run's PostgreSQL. Written to the documented adapter interface, laid out like the example sequelize adapter"},
			{What: "the login and consent interaction is the server's own minimal HTML form, which grants the requested scopes with the login",
				Why: "oidc-provider ships no login UI for production (devInteractions is development-only); a deployment writes its interaction routes, and a first-party client's login asks no consent"},
			{What: "signing keys (one RS256 key) and cookie keys generated per run into 0600 files",
				Why: "without jwks the module signs with development keys and warns; without cookie keys its cookies are unsigned"},
			{What: "the TTLs set explicitly to the module's documented defaults",
				Why: "so the configuration states them (the module logs a notice for each default it uses); values unchanged"},
			{What: "plain http issuer on 127.0.0.1",
				Why: "TLS would measure the TLS stack, not the IdP"},
			{What: "one user password compared in constant time, no password hashing and no account store",
				Why: "the documented configuration leaves accounts to the deployment (findAccount); Hydra here checks no password at all. A deployment's account store would add its hashing cost to S4"},
		},
		Notes: []string{
			"One Node.js process: JavaScript runs on one core (the documentation's setup; no cluster module), PostgreSQL and the event loop's I/O threads beside it.",
			"S3 introspects client_credentials tokens (opaque; the ClientCredentials model) as the same client; S5 and S6 use tokens of a login through the form (scope openid offline_access; user0..user99).",
			"S5 reuses its pool: oidc-provider rotates a confidential client's refresh token only after 70% of its 14-day life (rotateRefreshToken's default), so each refresh returns the same token.",
			"Expired rows are not swept (like the documentation's example adapters): the tables grow within a run.",
			"No PKCE: oidc-provider requires it only for public clients by default (pkce.required), and the client is confidential.",
		},
		Known: []schema.Known{{
			What: "oidc-provider 9 supports Node.js 22 LTS and later and warns at start on Node 20 (the machine's node); it runs",
			Ref:  src + "lib/index.js",
		}},
	}
}
