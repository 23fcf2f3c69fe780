package refop

import (
	"slices"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is the reference OP: zitadel/oidc's example server under
// products/refop/server's main (products/refop/adapter). Not a product of the
// comparison: a protocol-only ceiling.
func Product() product.Product {
	return product.Product{
		Name:         "refop",
		InDefaultRun: true,
		Reference:    true,
		Docs:         "docs/products/reference-op.md",
		NA: map[string]string{
			"client_credentials_login": "the reference OP answers userinfo with 403 to a client's (service user's) access token: S2l's rule wants a 2xx with a sub",
		},
		Part:          refopPart,
		Answers:       &product.Answers{Table: refopTable, Readback: refopReadback},
		Fresh:         true, // its adapter's product_fresh
		ReadFacts:     readFacts,
		ReadFactsFrom: readFrom,
		ServerMetrics: servermetrics.Product{NA: "the reference OP (zitadel/oidc's example server) exposes no metrics endpoint"},
	}
}

// The example's built-in demo values (storage/storage.go, storage/user.go,
// main.go of the module), not secrets of this machine: the service user
// sid1 (client_credentials), the web client (auth code, refresh,
// introspection by Basic; its default redirect URI), the user, and the
// jwt-bearer service user "service" with its key key1 (up records the key
// file of the module cache as REFOP_KEY).
const (
	refopRedirect = "http://localhost:9999/auth/callback"
	refopUser     = "test-user@localhost"
	refopScope    = "openid offline_access"
)

// refopTable: user tokens (S3, S5, S6) come from the example's login page,
// driven headlessly by mintpool's form-page (LOGIN_PARALLEL logins at a
// time); introspection answers active only for tokens whose audience holds
// the calling client, so S3 introspects the web client's own user tokens
// with its Basic credentials. The example rotates refresh tokens (the old
// one is deleted on use): each S5 connection follows its own chain.
// Lifetimes: access tokens 5 minutes, refresh tokens 5 hours
// (storage.go); assertions are minted with --ttl 1h.
func refopTable(st *product.State) product.Table {
	issuer := st.Get("ISSUER")
	token := issuer + "oauth/token"
	web := product.BasicAuth("web", st.Secret("web"))
	user := []string{"--scope", refopScope, "--username", refopUser, "--password-file", st.Secret("user-password")}
	login := func(emit, mode string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: mode, Flow: "form-page", Args: slices.Concat(
			[]string{"--flow", "form-page", "--token-url", token, "--auth-url", issuer + "auth"}, web,
			[]string{"--redirect-uri", refopRedirect}, user,
			[]string{"--emit", emit, "-P", st.Get("LOGIN_PARALLEL"), "--product", "refop"})}
	}
	return product.Table{Scenarios: map[string]product.Scenario{
		"discovery": {Endpoint: issuer + ".well-known/openid-configuration"},
		"client_credentials": {Endpoint: token,
			Load: append(product.BasicAuth("sid1", st.Secret("sid1")), "--scope", "openid")},
		"jwt_bearer": {Endpoint: token, Load: slices.Concat(product.Reuse, []string{"--scope", "openid"}), TTL: 3600,
			Pool: &product.Pool{Kind: "assertion", Mode: "reuse", Flow: "jwt-bearer", Args: []string{"--flow", "jwt-bearer",
				"--token-url", token, "--key-file", st.Get("REFOP_KEY"), "--kid", "key1", "--iss", "service", "--sub", "service",
				"--aud", issuer, "--ttl", "1h", "-P", "8", "--product", "refop"}}},
		"introspect": {Endpoint: issuer + "oauth/introspect", Load: slices.Concat(web, product.Reuse), TTL: 300,
			Pool: login("access_token", "reuse")},
		"auth_code": {Endpoint: issuer + "auth", Load: slices.Concat([]string{"--login", "form-page", "--token-url", token,
			"--redirect-uri", refopRedirect}, web, user)},
		"refresh":  {Endpoint: token, Load: slices.Concat(web, product.Chain), TTL: 18000, Pool: login("refresh_token", "chain")},
		"userinfo": {Endpoint: issuer + "userinfo", Load: product.Reuse, TTL: 300, Pool: login("access_token", "reuse")},
	}}
}

// refopReadback: the version from the binary's build info, the access
// tokens' lifespan and format from a client_credentials grant.
func refopReadback(st *product.State) []string {
	return slices.Concat([]string{"--binary", st.Get("REFOP_BIN"), "--token-url", st.Get("ISSUER") + "oauth/token"},
		[]string{"--client-id", "sid1", "--client-secret-file", st.Secret("sid1"), "--scope", "openid"})
}

func refopPart(product.Inputs) schema.Meta {
	return schema.Meta{
		Settings: map[string]string{"log_level": "debug (hard-wired; logged to a file)"},
		ConfigSources: []schema.Link{
			{What: "example server", URL: "https://github.com/zitadel/oidc/tree/v3.52.0/example/server"},
			{What: "the example's main, which products/refop/server/main.go repeats but for the listen address", URL: "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/main.go"},
			{What: "clients, users and keys", URL: "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/storage/storage.go"},
		},
		Deviations: []schema.Note{
			{What: "S3/S5/S6 tokens come from the example login page, driven by mintpool's form-page (web client, demo user)",
				Why: "the example only issues user tokens through its login page; introspection answers active only for tokens whose audience holds the calling client"},
			{What: "the example's packages under idpbench's own main (products/refop/server), which binds 127.0.0.1:PORT",
				Why: "the example's main binds :PORT (every interface) and has no listen address setting, so it would serve its public demo credentials beyond the machine; the main is the example's otherwise (issuer http://localhost:PORT/, storage, clients, routes, PORT variable)"},
			{What: "started again with an empty store before a load step (ladder window or GC-jitter run) whenever the load since its start issued tokens, so every step runs on a store holding nothing but its own pool (whose tokens are minted again)",
				Why: "the example's storage keeps every token it issues and never frees one (storage.go): in the reference run of 8f3fc66 its RSS grew from 19 MB to 4.3 GB, and once it passed about 0.5 GB its one-second throughput swung between 2,000 and 13,000 qps with its GC, so warmups ran to the 60 s cap and a step measured the run's history as much as its connection count"},
		},
		Notes: []string{
			"Not a product of the comparison: in-memory storage, nothing durable; a protocol-only ceiling.",
			"Built from products/refop/server: zitadel/oidc v3.52.0's example packages (config, exampleop, storage) under a small main of ours that differs from the example's only in binding 127.0.0.1 (loopback only); its own Go module, pinned to the versions the example's module resolves to.",
			"Cold start: no database, so mode A (fresh) and mode B (restart) are the same start of the binary; both are recorded.",
			"Access tokens live 5 minutes (example storage): pools of them are reminted before they expire, and a GC-jitter run longer than their life falls back to client_credentials (S2; the step says so in its labels).",
			"The example keeps every token it issues in memory until its process ends; since every load step starts it again empty, its memory grows within a step only.",
		},
	}
}
