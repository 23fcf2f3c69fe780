package hydra

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/idpbench/idpbench/internal/readback"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/logsafe"
)

// Hydra's documents, for the facts nothing running tells.
const (
	hydraConfigDoc  = "https://www.ory.sh/docs/hydra/reference/configuration"
	hydraRefreshDoc = "https://www.ory.sh/docs/hydra/guides/graceful-token-refresh"
)

// readFrom is what readFacts reads through which of readback's flags.
const readFrom = "--admin-url (GET /version) --postgres (hydra_client secret hash, hydra_oauth2_access lifespans) --client-id"

// readFacts reads its version (admin /version), how the benchmark client's
// secret is hashed and the lifespan of the access tokens it stored (its
// database), and the connections it holds. Refresh-token lifespan and
// rotation are not readable from a running Hydra: documented.
func readFacts(ctx context.Context, r *readback.Reader) error {
	if err := r.Need("admin-url", r.Config().AdminURL == nil); err != nil {
		return err
	}
	steps := []func(context.Context, *readback.Reader) error{readVersion, readHashing, readLifespan,
		func(ctx context.Context, r *readback.Reader) error { return r.Connections(ctx) }}
	for _, f := range steps {
		if err := f(ctx, r); err != nil {
			return err
		}
	}
	r.Documented("refresh token lifespan", "720h (ttl.refresh_token default; not set by this run)", hydraConfigDoc)
	r.Documented("refresh token rotation", "on: every refresh token is single-use, a reuse revokes the chain; oauth2.grant.refresh_token.rotation_grace_period not set", hydraRefreshDoc)
	return nil
}

func readVersion(ctx context.Context, r *readback.Reader) error {
	u := r.Config().AdminURL.JoinPath("version")
	body, err := r.Get(ctx, u)
	if err != nil {
		return fmt.Errorf("reading Hydra's version: %w", err)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Version == "" {
		return fmt.Errorf("reading Hydra's version: %s answered without a version", logsafe.URL(u))
	}
	r.SetVersion(v.Version)
	r.Fact("version", v.Version, "admin API: GET /version")
	return nil
}

// readHashing reads the hasher and its parameters from the stored hash
// of the client's secret (the hash itself is never output).
func readHashing(ctx context.Context, r *readback.Reader) error {
	if err := r.Need("client-id", r.Config().ClientID == ""); err != nil {
		return err
	}
	var hash string
	err := r.Query(ctx, "client "+r.Config().ClientID+"'s secret hash (hydra_client)",
		`SELECT client_secret FROM hydra_client WHERE id = $1`,
		func(rows pgx.Rows) error { return rows.Scan(&hash) }, r.Config().ClientID)
	if err != nil {
		return err
	}
	desc, err := describeHash(hash)
	if err != nil {
		return fmt.Errorf("client %s's secret: %w", r.Config().ClientID, err)
	}
	r.Fact("client secret hashing", desc, "hydra database: hydra_client.client_secret of "+r.Config().ClientID+" (its parameters only)")
	return nil
}

// describeHash renders the parameters of a PHC-style hash
// ($pbkdf2-sha256$i=25000,l=32$salt$hash) or a bcrypt hash ($2a$10$...).
func describeHash(h string) (string, error) {
	parts := strings.Split(h, "$")
	if len(parts) < 4 || parts[0] != "" {
		return "", fmt.Errorf("not a recognised hash format")
	}
	alg := parts[1]
	if strings.HasPrefix(alg, "2") { // bcrypt: $2a$COST$...
		cost, err := strconv.Atoi(parts[2])
		if err != nil {
			return "", fmt.Errorf("bcrypt hash without a cost")
		}
		return fmt.Sprintf("bcrypt, cost %d", cost), nil
	}
	params, err := url.ParseQuery(strings.ReplaceAll(parts[2], ",", "&"))
	if err != nil || len(params) == 0 {
		return "", fmt.Errorf("%s hash without parameters", alg)
	}
	s := alg
	if i := params.Get("i"); i != "" {
		s += ", " + i + " iterations"
	}
	if l := params.Get("l"); l != "" {
		s += ", " + l + "-byte key"
	}
	for _, k := range []string{"m", "t", "p"} { // argon2
		if v := params.Get(k); v != "" {
			s += ", " + k + "=" + v
		}
	}
	return s, nil
}

// readLifespan reads the lifespan of the access tokens Hydra stored: the
// smallest expires_at - requested_at of the newest 20. Hydra takes
// expires_at a moment after requested_at (once the client's secret is
// checked) and rounds it to the second (fosite's handlers:
// time.Now().UTC().Add(lifespan).Round(time.Second)), so one token's
// difference is the lifespan plus up to half a second plus that moment:
// 3601 s was read under load. The smallest of several is the lifespan to
// the second unless every one of them came out over half a second long.
func readLifespan(ctx context.Context, r *readback.Reader) error {
	var seconds float64
	err := r.Query(ctx, "the newest access tokens (hydra_oauth2_access)",
		`SELECT MIN(EXTRACT(EPOCH FROM expires_at - requested_at))::float8 FROM
			(SELECT expires_at, requested_at FROM hydra_oauth2_access ORDER BY requested_at DESC LIMIT 20) newest
		 HAVING COUNT(*) > 0`,
		func(rows pgx.Rows) error { return rows.Scan(&seconds) })
	if err != nil {
		return err
	}
	r.Fact("access token lifespan", fmt.Sprintf("%.0f s", seconds),
		"hydra database: hydra_oauth2_access, the smallest expires_at - requested_at of the newest 20 tokens (Hydra rounds expires_at to the second)")
	return nil
}
