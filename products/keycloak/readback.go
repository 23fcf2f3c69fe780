package keycloak

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/idpbench/idpbench/internal/readback"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// readFrom is what readFacts reads through which of readback's flags.
const readFrom = "--postgres (migration_model, credential, realm) --realm --metrics (jvm_memory_max_bytes, jvm_info, agroal pool)"

// readFacts reads, from Keycloak's database: its version (the last schema
// migration), the password hashing its users' credentials were stored
// with, the realm's token and session settings; from its management
// /metrics: the heap maximum the JVM runs with, the JVM, and the
// database pool Agroal holds.
func readFacts(ctx context.Context, r *readback.Reader) error {
	steps := []func(context.Context, *readback.Reader) error{
		readVersion, readHashing, readRealm, readJVM,
		func(ctx context.Context, r *readback.Reader) error { return r.Connections(ctx) },
	}
	for _, f := range steps {
		if err := f(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func readVersion(ctx context.Context, r *readback.Reader) error {
	var version string
	err := r.Query(ctx, "Keycloak's version (migration_model)",
		`SELECT version FROM migration_model ORDER BY update_time DESC, version DESC LIMIT 1`,
		func(rows pgx.Rows) error { return rows.Scan(&version) })
	if err != nil {
		return err
	}
	r.SetVersion(version)
	r.Fact("version", version, "keycloak database: migration_model.version of the last migration")
	return nil
}

// readHashing reads the hashing of every stored password credential
// (credential.credential_data; the salts and hashes are in secret_data,
// never read).
func readHashing(ctx context.Context, r *readback.Reader) error {
	var kinds []string
	total := int64(0)
	err := r.Query(ctx, "the password credentials (credential)",
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
	r.Fact("password hashing", strings.Join(kinds, "; "),
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

// readRealm reads the benchmark realm's token and session settings.
func readRealm(ctx context.Context, r *readback.Reader) error {
	if err := r.Need("realm", r.Config().Realm == ""); err != nil {
		return err
	}
	var at, idle, maxLife, reuse int64
	var revoke bool
	var policy *string
	err := r.Query(ctx, "realm "+r.Config().Realm,
		`SELECT access_token_lifespan, sso_idle_timeout, sso_max_lifespan, revoke_refresh_token,
			refresh_token_max_reuse, password_policy FROM realm WHERE name = $1`,
		func(rows pgx.Rows) error { return rows.Scan(&at, &idle, &maxLife, &revoke, &reuse, &policy) }, r.Config().Realm)
	if err != nil {
		return err
	}
	from := "keycloak database: realm " + r.Config().Realm + "."
	r.Fact("realm access token lifespan", fmt.Sprintf("%d s", at), from+"access_token_lifespan")
	r.Fact("SSO session idle timeout", fmt.Sprintf("%d s", idle), from+"sso_idle_timeout")
	r.Fact("SSO session max lifespan", fmt.Sprintf("%d s", maxLife), from+"sso_max_lifespan")
	rotation := "off: a refresh token stays valid after use (revoke_refresh_token false)"
	if revoke {
		rotation = fmt.Sprintf("on: a refresh token may be reused %d times (revoke_refresh_token true)", reuse)
	}
	r.Fact("refresh token rotation", rotation, from+"revoke_refresh_token, refresh_token_max_reuse")
	p := "none (the server's default hashing applies)"
	if policy != nil && *policy != "" {
		p = *policy
	}
	r.Fact("password policy", p, from+"password_policy")
	return nil
}

// readJVM reads the JVM, its heap maximum and the Agroal pool from the
// management interface's metrics.
func readJVM(ctx context.Context, r *readback.Reader) error {
	fams, err := r.Metrics(ctx)
	if err != nil {
		return err
	}
	if err := r.JVMFacts(fams, "management /metrics", "jvm_info_total"); err != nil {
		return err
	}
	avail, err := readback.Samples(fams, "agroal_available_count", nil)
	if err != nil {
		return err
	}
	active, err := readback.Samples(fams, "agroal_active_count", nil)
	if err != nil {
		return err
	}
	a, b := readback.Sum(avail, nil), readback.Sum(active, nil)
	r.Fact("database pool (Agroal)", fmt.Sprintf("%.0f connections open (%.0f idle, %.0f in use)", a+b, a, b),
		"management /metrics: agroal_available_count + agroal_active_count")
	return nil
}
