package spring

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/readback"
)

// Spring's documents, for the facts nothing running tells.
const (
	passwordStorageDoc = "https://docs.spring.io/spring-security/reference/features/authentication/password-storage.html"
	inMemoryUsersDoc   = "https://docs.spring.io/spring-security/reference/servlet/authentication/passwords/in-memory.html"
)

// readFrom is what readFacts reads through which of readback's flags.
const readFrom = "--admin-url (actuator /info: versions; /prometheus: JVM, heap, Hikari pool) --postgres (oauth2_registered_client: secret hashing, token settings; the tables and their rows; the connections it holds) --client-id"

// readFacts reads the versions (actuator /info), the client's secret
// hashing and token settings (oauth2_registered_client), the tables in use
// and their rows, the JVM, its heap and the Hikari pool (actuator
// /prometheus), and the connections the server holds.
func readFacts(ctx context.Context, r *readback.Reader) error {
	if err := r.Need("admin-url", r.Config().AdminURL == nil); err != nil {
		return err
	}
	if err := r.Need("client-id", r.Config().ClientID == ""); err != nil {
		return err
	}
	steps := []func(context.Context, *readback.Reader) error{readVersions, readClient, readTables, readJVM,
		func(ctx context.Context, r *readback.Reader) error { return r.Connections(ctx) }}
	for _, f := range steps {
		if err := f(ctx, r); err != nil {
			return err
		}
	}
	r.Documented("user password hashing", "bcrypt via DelegatingPasswordEncoder ({bcrypt}, cost 10), users in memory: nothing stored to read; the server encodes the one password at start with PasswordEncoderFactories.createDelegatingPasswordEncoder()", passwordStorageDoc)
	r.Documented("user store", "InMemoryUserDetailsManager (as the sample's)", inMemoryUsersDoc)
	return nil
}

// readVersions reads what the server's VersionInfo adds to /info (each
// version from its jar's manifest) and the JVM the actuator reports.
func readVersions(ctx context.Context, r *readback.Reader) error {
	u := r.Config().AdminURL.JoinPath("info")
	body, err := r.Get(ctx, u)
	if err != nil {
		return fmt.Errorf("reading Spring's versions: %w", err)
	}
	var info struct {
		Idpbench struct {
			AuthorizationServer string `json:"authorization_server"`
			SpringSecurity      string `json:"spring_security"`
			SpringBoot          string `json:"spring_boot"`
		} `json:"idpbench"`
	}
	if err := json.Unmarshal(body, &info); err != nil || info.Idpbench.AuthorizationServer == "" {
		return fmt.Errorf("reading Spring's versions: %s answered without idpbench.authorization_server", logsafe.URL(u))
	}
	v := info.Idpbench
	r.SetVersion(v.AuthorizationServer)
	from := "actuator GET /actuator/info: idpbench."
	r.Fact("version", v.AuthorizationServer, from+"authorization_server (the jar's Implementation-Version)")
	r.Fact("Spring Security", v.SpringSecurity, from+"spring_security (SpringSecurityCoreVersion)")
	r.Fact("Spring Boot", v.SpringBoot, from+"spring_boot (SpringBootVersion)")
	return nil
}

// readClient reads the client's row: the encoder its secret is stored with
// ({id} prefix and, for bcrypt, the cost; never the hash), and its token
// settings as the framework serialised them.
func readClient(ctx context.Context, r *readback.Reader) error {
	id := r.Config().ClientID
	var secret, tokenSettings, clientSettings string
	err := r.Query(ctx, "client "+id+" (oauth2_registered_client)",
		`SELECT coalesce(client_secret, ''), token_settings, client_settings FROM oauth2_registered_client WHERE client_id = $1`,
		func(rows pgx.Rows) error { return rows.Scan(&secret, &tokenSettings, &clientSettings) }, id)
	if err != nil {
		return err
	}
	desc, err := describeSecret(secret)
	if err != nil {
		return fmt.Errorf("client %s's secret: %w", id, err)
	}
	from := "spring database: oauth2_registered_client of " + id + "."
	r.Fact("client secret hashing", desc, from+"client_secret (its encoder prefix and cost only)")
	ts, err := describeTokenSettings(tokenSettings)
	if err != nil {
		return fmt.Errorf("client %s's token_settings: %w", id, err)
	}
	for _, f := range ts {
		r.Fact(f[0], f[1], from+"token_settings "+f[2])
	}
	cs, err := describeClientSettings(clientSettings)
	if err != nil {
		return fmt.Errorf("client %s's client_settings: %w", id, err)
	}
	for _, f := range cs {
		r.Fact(f[0], f[1], from+"client_settings "+f[2])
	}
	return nil
}

// describeClientSettings reads whether the client must send PKCE and
// whether its users see a consent page.
func describeClientSettings(js string) ([][3]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return nil, err
	}
	var out [][3]string
	for _, d := range []struct{ name, key, yes, no string }{
		{"PKCE", "settings.client.require-proof-key", "required", "not required"},
		{"consent page", "settings.client.require-authorization-consent", "required", "not required"},
	} {
		var b bool
		if err := json.Unmarshal(m[d.key], &b); err != nil {
			return nil, fmt.Errorf("%s: %w", d.key, err)
		}
		v := d.no
		if b {
			v = d.yes
		}
		out = append(out, [3]string{d.name, v + " (" + d.key + " " + strconv.FormatBool(b) + ")", d.key})
	}
	return out, nil
}

// describeSecret renders a DelegatingPasswordEncoder value: "{bcrypt}$2a$10$...",
// "{noop}...", "{pbkdf2}..."; the rest after the prefix is never output
// but for bcrypt's cost.
func describeSecret(s string) (string, error) {
	if !strings.HasPrefix(s, "{") || !strings.Contains(s, "}") {
		return "", fmt.Errorf("no {encoder} prefix")
	}
	id, rest, _ := strings.Cut(s[1:], "}")
	switch id {
	case "noop":
		return "none: {noop}, stored in plain", nil
	case "bcrypt":
		parts := strings.Split(rest, "$")
		if len(parts) < 4 {
			return "", fmt.Errorf("{bcrypt} value is not a bcrypt hash")
		}
		cost, err := strconv.Atoi(parts[2])
		if err != nil {
			return "", fmt.Errorf("{bcrypt} value without a cost")
		}
		return fmt.Sprintf("bcrypt $%s$, cost %d ({bcrypt}, DelegatingPasswordEncoder)", parts[1], cost), nil
	}
	return "{" + id + "} (DelegatingPasswordEncoder)", nil
}

// describeTokenSettings reads the lifespans, the access token format and
// refresh-token reuse from the JSON the framework stores (Jackson with type
// information: a Duration is ["java.time.Duration", seconds]). Each is
// name, value, the setting's key.
func describeTokenSettings(js string) ([][3]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return nil, err
	}
	const p = "settings.token."
	var out [][3]string
	for _, d := range []struct{ name, key string }{
		{"access token lifespan", "access-token-time-to-live"},
		{"refresh token lifespan", "refresh-token-time-to-live"},
		{"authorization code lifespan", "authorization-code-time-to-live"},
	} {
		s, err := duration(m[p+d.key])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p+d.key, err)
		}
		out = append(out, [3]string{d.name, s, p + d.key})
	}
	var format struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(m[p+"access-token-format"], &format); err != nil || format.Value == "" {
		return nil, fmt.Errorf("%s: no value", p+"access-token-format")
	}
	out = append(out, [3]string{"access token format", format.Value, p + "access-token-format"})
	var reuse bool
	if err := json.Unmarshal(m[p+"reuse-refresh-tokens"], &reuse); err != nil {
		return nil, fmt.Errorf("%s: %w", p+"reuse-refresh-tokens", err)
	}
	rot := "on: every refresh returns a new refresh token (reuse-refresh-tokens false)"
	if reuse {
		rot = "off: a refresh token stays valid after use (reuse-refresh-tokens true)"
	}
	out = append(out, [3]string{"refresh token rotation", rot, p + "reuse-refresh-tokens"})
	return out, nil
}

// duration renders a serialised Duration: Jackson 3 (Spring Security 7)
// writes ["java.time.Duration", "PT1H"], Jackson 2 wrote seconds
// (["java.time.Duration", 3600.0]).
func duration(raw json.RawMessage) (string, error) {
	var v []json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 2 {
		return "", fmt.Errorf("not a [type, value] pair: %s", logsafe.Text(string(raw)))
	}
	var seconds float64
	if err := json.Unmarshal(v[1], &seconds); err == nil {
		return fmt.Sprintf("%.0f s", seconds), nil
	}
	var iso string
	if err := json.Unmarshal(v[1], &iso); err != nil || !strings.HasPrefix(iso, "PT") {
		return "", fmt.Errorf("neither seconds nor an ISO-8601 time duration: %s", logsafe.Text(string(raw)))
	}
	d, err := time.ParseDuration(strings.ToLower(strings.TrimPrefix(iso, "PT")))
	if err != nil {
		return "", fmt.Errorf("ISO-8601 duration %q: %w", logsafe.Text(iso), err)
	}
	return fmt.Sprintf("%.0f s", d.Seconds()), nil
}

// readTables lists the tables of the server's database with their rows.
func readTables(ctx context.Context, r *readback.Reader) error {
	var tables []string
	err := r.Query(ctx, "the tables (information_schema.tables)",
		`SELECT table_name, (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I', table_name), false, true, '')))[1]::text::bigint
		 FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
		func(rows pgx.Rows) error {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				return err
			}
			tables = append(tables, fmt.Sprintf("%s (%d rows)", name, n))
			return nil
		})
	if err != nil {
		return err
	}
	r.Fact("tables in use", strings.Join(tables, ", "), "spring database: information_schema.tables, the base tables of schema public, count(*) of each")
	var types []string
	err = r.Query(ctx, "oauth2_authorization's column types",
		`SELECT data_type, count(*) FROM information_schema.columns WHERE table_name = 'oauth2_authorization' GROUP BY 1 ORDER BY 1`,
		func(rows pgx.Rows) error {
			var t string
			var n int64
			if err := rows.Scan(&t, &n); err != nil {
				return err
			}
			types = append(types, fmt.Sprintf("%d %s", n, t))
			return nil
		})
	if err != nil {
		return err
	}
	r.Fact("oauth2_authorization column types", strings.Join(types, ", "), "spring database: information_schema.columns")
	return nil
}

// readJVM reads the JVM, its heap maximum and the Hikari pool from the
// actuator's Prometheus endpoint.
func readJVM(ctx context.Context, r *readback.Reader) error {
	fams, err := r.Metrics(ctx)
	if err != nil {
		return err
	}
	if err := r.JVMFacts(fams, "actuator /prometheus", "jvm_info"); err != nil {
		return err
	}
	maxc, err := readback.Samples(fams, "hikaricp_connections_max", nil)
	if err != nil {
		return err
	}
	open, err := readback.Samples(fams, "hikaricp_connections", nil)
	if err != nil {
		return err
	}
	r.Fact("database pool (HikariCP)", fmt.Sprintf("%.0f connections open, maximum %.0f", readback.Sum(open, nil), readback.Sum(maxc, nil)),
		"actuator /prometheus: hikaricp_connections, hikaricp_connections_max")
	return nil
}
