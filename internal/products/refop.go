package products

import "github.com/idpbench/idpbench/internal/schema"

// Refop is the reference OP: zitadel/oidc's example server under
// deploy/refop's main (scripts/products/refop). Not a product of the
// comparison: a protocol-only ceiling.
func Refop() Product {
	return Product{
		Name: "refop",
		NA: map[string]string{
			"client_credentials_login": "the reference OP answers userinfo with 403 to a client's (service user's) access token: S2l's rule wants a 2xx with a sub",
		},
		Part: refopPart,
	}
}

func refopPart(Inputs) schema.Meta {
	return schema.Meta{
		Settings: map[string]string{"log_level": "debug (hard-wired; logged to a file)"},
		ConfigSources: []schema.Link{
			{What: "example server", URL: "https://github.com/zitadel/oidc/tree/v3.52.0/example/server"},
			{What: "the example's main, which deploy/refop/main.go repeats but for the listen address", URL: "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/main.go"},
			{What: "clients, users and keys", URL: "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/storage/storage.go"},
		},
		Deviations: []schema.Note{
			{What: "S3/S5/S6 tokens come from the example login page, driven by mintpool's refop-login (web client, demo user)",
				Why: "the example only issues user tokens through its login page; introspection answers active only for tokens whose audience holds the calling client"},
			{What: "the example's packages under idpbench's own main (deploy/refop), which binds 127.0.0.1:PORT",
				Why: "the example's main binds :PORT (every interface) and has no listen address setting, so it would serve its public demo credentials beyond the machine; the main is the example's otherwise (issuer http://localhost:PORT/, storage, clients, routes, PORT variable)"},
			{What: "started again with an empty store before a load step (ladder window or GC-jitter run) whenever the load since its start issued tokens, so every step runs on a store holding nothing but its own pool (whose tokens are minted again)",
				Why: "the example's storage keeps every token it issues and never frees one (storage.go): in the reference run of 8f3fc66 its RSS grew from 19 MB to 4.3 GB, and once it passed about 0.5 GB its one-second throughput swung between 2,000 and 13,000 qps with its GC, so warmups ran to the 60 s cap and a step measured the run's history as much as its connection count"},
		},
		Notes: []string{
			"Not a product of the comparison: in-memory storage, nothing durable; a protocol-only ceiling.",
			"Built from deploy/refop: zitadel/oidc v3.52.0's example packages (config, exampleop, storage) under a small main of ours that differs from the example's only in binding 127.0.0.1 (loopback only); its own Go module, pinned to the versions the example's module resolves to.",
			"Cold start: no database, so mode A (fresh) and mode B (restart) are the same start of the binary; both are recorded.",
			"Access tokens live 5 minutes (example storage): pools of them are reminted before they expire, and a GC-jitter run longer than their life falls back to client_credentials (S2; the step says so in its labels).",
			"The example keeps every token it issues in memory until its process ends; since every load step starts it again empty, its memory grows within a step only.",
		},
	}
}
