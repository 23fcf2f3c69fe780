package nodeoidc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/readback"
)

// The module's sources, for what only they tell.
const (
	clientModelDoc = "https://github.com/panva/node-oidc-provider/blob/v9.13.3/lib/models/client.js"
	defaultsDoc    = "https://github.com/panva/node-oidc-provider/blob/v9.13.3/lib/helpers/defaults.js"
)

// serverConfig is what the server's admin listener answers at /config
// (products/nodeoidc/server/server.js, configuration()).
type serverConfig struct {
	Version  string         `json:"oidc_provider_version"`
	Node     string         `json:"node_version"`
	TTL      map[string]int `json:"ttl_seconds"`
	Features []string       `json:"features"`
	Client   struct {
		ID            string   `json:"client_id"`
		AuthMethod    string   `json:"token_endpoint_auth_method"`
		GrantTypes    []string `json:"grant_types"`
		SecretStorage string   `json:"secret_storage"`
	} `json:"client"`
	Keys []struct {
		Kty string `json:"kty"`
		Alg string `json:"alg"`
	} `json:"signing_keys"`
	Storage struct {
		PoolMax int      `json:"pool_max"`
		Tables  []string `json:"tables"`
	} `json:"storage"`
}

// readFrom is what readFacts reads through which of readback's flags.
const readFrom = "--admin-url (GET /config: version, lifetimes, client, keys, pool) --postgres (the oidc_* tables and their rows; the connections it holds)"

// readFacts reads the configuration in force from the server (its admin
// /config: the module's version from its node_modules, the lifetimes, the
// client, the keys, the pool), the tables in its database with the rows
// each holds, and the connections it holds.
func readFacts(ctx context.Context, r *readback.Reader) error {
	if err := r.Need("admin-url", r.Config().AdminURL == nil); err != nil {
		return err
	}
	u := r.Config().AdminURL.JoinPath("config")
	body, err := r.Get(ctx, u)
	if err != nil {
		return fmt.Errorf("reading the server's configuration: %w", err)
	}
	var c serverConfig
	if err := json.Unmarshal(body, &c); err != nil || c.Version == "" {
		return fmt.Errorf("reading the server's configuration: %s answered without oidc_provider_version", logsafe.URL(u))
	}
	from := "the server's admin listener: GET /config (its configuration object; the version from node_modules/oidc-provider/package.json)"
	r.SetVersion(c.Version)
	r.Fact("version", "oidc-provider "+c.Version+" on Node.js "+c.Node, from)
	r.Fact("token lifetimes", ttlText(c.TTL), from)
	r.Fact("features enabled beyond the defaults", strings.Join(c.Features, ", "), from)
	r.Fact("client", fmt.Sprintf("%s: %s; %s", c.Client.ID, c.Client.AuthMethod, strings.Join(c.Client.GrantTypes, ", ")), from)
	r.Fact("client secret storage", c.Client.SecretStorage, from)
	r.Documented("client secret check", "constantEquals(stored, given) in Client#compareClientSecret: no hashing of static clients' secrets", clientModelDoc)
	r.Fact("signing keys", keysText(c), from)
	r.Fact("database pool", fmt.Sprintf("node-postgres Pool, max %d", c.Storage.PoolMax), from)
	r.Documented("refresh token rotation", "rotateRefreshToken default: a confidential client's refresh token is rotated once 70% of its life has passed, else reused", defaultsDoc)
	if err := readTables(ctx, r, c.Storage.Tables); err != nil {
		return err
	}
	return r.Connections(ctx)
}

func ttlText(ttl map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ttl)) {
		parts = append(parts, fmt.Sprintf("%s %d s", k, ttl[k]))
	}
	return strings.Join(parts, ", ")
}

func keysText(c serverConfig) string {
	var parts []string
	for _, k := range c.Keys {
		parts = append(parts, k.Kty+" "+k.Alg)
	}
	return strings.Join(parts, ", ") + " (generated per run)"
}

// readTables reads the adapter's tables in the product's database and the
// rows each holds when read (the end of setup): the tables the scenarios write.
func readTables(ctx context.Context, r *readback.Reader, want []string) error {
	var tables, used []string
	err := r.Query(ctx, "the adapter's tables (information_schema.tables)",
		`SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'oidc\_%' ORDER BY 1`,
		func(rows pgx.Rows) error {
			var t string
			err := rows.Scan(&t)
			tables = append(tables, t)
			return err
		})
	if err != nil {
		return err
	}
	for _, t := range want {
		if !slices.Contains(tables, t) {
			return fmt.Errorf("the server names table %s, which its database does not have", t)
		}
	}
	for _, t := range tables {
		var n int64
		// t comes from information_schema and matches oidc_<word>: safe to quote as an identifier.
		if err := r.Query(ctx, "rows of "+t, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize(),
			func(rows pgx.Rows) error { return rows.Scan(&n) }); err != nil {
			return err
		}
		if n > 0 {
			used = append(used, fmt.Sprintf("%s %d", t, n))
		}
	}
	r.Fact("PostgreSQL tables", fmt.Sprintf("%d (one per model: %s)", len(tables), strings.Join(tables, ", ")),
		"the product's database: information_schema.tables")
	if len(used) == 0 {
		used = []string{"none"}
	}
	r.Fact("tables with rows at readback", strings.Join(used, ", "), "the product's database: count(*) of each table")
	return nil
}
