package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// keycloak reads, from Keycloak's database: its version (the last schema
// migration), the password hashing its users' credentials were stored
// with, the realm's token and session settings; from its management
// /metrics: the heap maximum the JVM runs with, the JVM, and the
// database pool Agroal holds.
func (r *reader) keycloak(ctx context.Context) error {
	steps := []func(context.Context) error{
		r.keycloakVersion, r.keycloakHashing, r.keycloakRealm, r.keycloakJVM, r.connections,
	}
	for _, f := range steps {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) keycloakVersion(ctx context.Context) error {
	err := r.query(ctx, "Keycloak's version (migration_model)",
		`SELECT version FROM migration_model ORDER BY update_time DESC, version DESC LIMIT 1`,
		func(rows pgx.Rows) error { return rows.Scan(&r.version) })
	if err != nil {
		return err
	}
	r.read("version", r.version, "keycloak database: migration_model.version of the last migration")
	return nil
}

// keycloakHashing reads the hashing of every stored password credential
// (credential.credential_data; the salts and hashes are in secret_data,
// never read).
func (r *reader) keycloakHashing(ctx context.Context) error {
	var kinds []string
	total := int64(0)
	err := r.query(ctx, "the password credentials (credential)",
		`SELECT credential_data, count(*) FROM credential WHERE type = 'password' GROUP BY credential_data ORDER BY 2 DESC`,
		func(rows pgx.Rows) error {
			var data string
			var n int64
			if err := rows.Scan(&data, &n); err != nil {
				return err
			}
			desc, err := describeKeycloakHash(data)
			if err != nil {
				return err
			}
			kinds, total = append(kinds, fmt.Sprintf("%s (%d credentials)", desc, n)), total+n
			return nil
		})
	if err != nil {
		return err
	}
	r.read("password hashing", strings.Join(kinds, "; "),
		fmt.Sprintf("keycloak database: credential.credential_data of all %d password credentials", total))
	return nil
}

// describeKeycloakHash renders a password credential's credential_data,
// e.g. {"hashIterations":5,"algorithm":"argon2","additionalParameters":
// {"memory":["7168"],"type":["id"],...}}.
func describeKeycloakHash(data string) (string, error) {
	var cd struct {
		Algorithm      string              `json:"algorithm"`
		HashIterations int64               `json:"hashIterations"`
		Additional     map[string][]string `json:"additionalParameters"`
	}
	if err := json.Unmarshal([]byte(data), &cd); err != nil || cd.Algorithm == "" {
		return "", fmt.Errorf("credential_data %q: not a password credential's hashing parameters", data)
	}
	s := fmt.Sprintf("%s, %d iterations", cd.Algorithm, cd.HashIterations)
	for _, k := range slices.Sorted(maps.Keys(cd.Additional)) {
		v := strings.Join(cd.Additional[k], ",")
		if k == "memory" {
			v += " KiB"
		}
		s += fmt.Sprintf(", %s %s", k, v)
	}
	return s, nil
}

// keycloakRealm reads the benchmark realm's token and session settings.
func (r *reader) keycloakRealm(ctx context.Context) error {
	if err := need("realm", r.cfg.Product, r.cfg.Realm == ""); err != nil {
		return err
	}
	var at, idle, maxLife, reuse int64
	var revoke bool
	var policy *string
	err := r.query(ctx, "realm "+r.cfg.Realm,
		`SELECT access_token_lifespan, sso_idle_timeout, sso_max_lifespan, revoke_refresh_token,
			refresh_token_max_reuse, password_policy FROM realm WHERE name = $1`,
		func(rows pgx.Rows) error { return rows.Scan(&at, &idle, &maxLife, &revoke, &reuse, &policy) }, r.cfg.Realm)
	if err != nil {
		return err
	}
	from := "keycloak database: realm " + r.cfg.Realm + "."
	r.read("realm access token lifespan", fmt.Sprintf("%d s", at), from+"access_token_lifespan")
	r.read("SSO session idle timeout", fmt.Sprintf("%d s", idle), from+"sso_idle_timeout")
	r.read("SSO session max lifespan", fmt.Sprintf("%d s", maxLife), from+"sso_max_lifespan")
	rotation := "off: a refresh token stays valid after use (revoke_refresh_token false)"
	if revoke {
		rotation = fmt.Sprintf("on: a refresh token may be reused %d times (revoke_refresh_token true)", reuse)
	}
	r.read("refresh token rotation", rotation, from+"revoke_refresh_token, refresh_token_max_reuse")
	p := "none (the server's default hashing applies)"
	if policy != nil && *policy != "" {
		p = *policy
	}
	r.read("password policy", p, from+"password_policy")
	return nil
}

// keycloakJVM reads the JVM, its heap maximum and the Agroal pool from the
// management interface's metrics.
func (r *reader) keycloakJVM(ctx context.Context) error {
	fams, err := r.metrics(ctx)
	if err != nil {
		return err
	}
	heap, err := samples(fams, "jvm_memory_max_bytes", map[string]string{"area": "heap"})
	if err != nil {
		return err
	}
	// G1 reports its young pools' max as -1 (undefined): the old
	// generation's max is the heap's (-Xmx).
	r.read("JVM heap maximum", mib(sum(heap, func(v float64) bool { return v < 0 || math.IsNaN(v) })),
		"management /metrics: jvm_memory_max_bytes{area=\"heap\"}, the pools with a defined max")
	if info, err := samples(fams, "jvm_info_total", nil); err == nil {
		l := info[0].labels
		r.read("JVM", strings.TrimSpace(l["vendor"]+" "+l["runtime"]+" "+l["version"]), "management /metrics: jvm_info_total")
	}
	avail, err := samples(fams, "agroal_available_count", nil)
	if err != nil {
		return err
	}
	active, err := samples(fams, "agroal_active_count", nil)
	if err != nil {
		return err
	}
	a, b := sum(avail, nil), sum(active, nil)
	r.read("database pool (Agroal)", fmt.Sprintf("%.0f connections open (%.0f idle, %.0f in use)", a+b, a, b),
		"management /metrics: agroal_available_count + agroal_active_count")
	return nil
}
