// Package readback reads a product's configuration back from the running
// product and its database, so that the report states what was in force —
// the hashing its database stores, the heap its JVM reports, the pool it
// holds open, the lifespan its tokens are issued with — rather than what a
// document says. A fact nothing running can tell is stated from the
// documentation and marked schema.FactDocumented with its source.
package readback

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/schema"
)

// Config says where to read. Each product reads what it needs and fails
// naming a missing source.
type Config struct {
	Product string
	// Reads reads the product's own facts: its entry's
	// (products/NAME/readback.go, internal/product.Product.Readback).
	Reads func(ctx context.Context, r *Reader) error

	Postgres string   // DSN of the product's own database
	Metrics  *url.URL // Prometheus text exposition (Keycloak's management /metrics)
	AdminURL *url.URL // Hydra's admin API base URL
	Binary   string   // the product's executable (Go build info: the reference OP)
	Realm    string   // Keycloak: the benchmark realm

	// Group, when positive, is the process group (coldstart's) whose TCP
	// listeners are read, and only those: the fact "listeners", an error
	// when one is bound beyond loopback. Proc is the proc filesystem
	// ("" = /proc).
	Group int
	Proc  string

	// A client_credentials grant at TokenURL (Basic client auth) reads the
	// access-token lifespan the product issues (expires_in).
	TokenURL     *url.URL
	ClientID     string
	ClientSecret string // never logged, never in the output
	Scope        string

	// WantVersion, when set, must equal the version the product reports:
	// the run states one version, the product must be running it.
	WantVersion string
	Timeout     time.Duration // per request or query
	Client      *http.Client  // nil: a client with Timeout
}

// Validate checks the flags that do not depend on the product's answers.
func (c *Config) Validate() error {
	if c.Group > 0 {
		return c.validateListeners()
	}
	if c.Reads == nil {
		return cli.Usagef("--product: %q: readback knows nothing to read of it", c.Product)
	}
	if c.TokenURL != nil && (c.ClientID == "" || c.ClientSecret == "") {
		return cli.Usagef("--token-url needs --client-id and --client-secret-file (or IDPBENCH_CLIENT_SECRET)")
	}
	if c.Timeout <= 0 {
		return cli.Usagef("--timeout: must be positive")
	}
	return nil
}

// validateListeners checks a read of the listeners alone: any product
// (the name labels the record), no other source.
func (c *Config) validateListeners() error {
	if c.Product == "" {
		return cli.Usagef("--product: required (the name of the product whose listeners are read)")
	}
	if c.Postgres != "" || c.Metrics != nil || c.AdminURL != nil || c.Binary != "" || c.TokenURL != nil || c.WantVersion != "" {
		return cli.Usagef("--listeners reads the listeners only: no other source, no --want-version")
	}
	if c.Timeout <= 0 {
		return cli.Usagef("--timeout: must be positive")
	}
	return nil
}

// Read reads the facts of c.Product.
func Read(ctx context.Context, c Config) (*schema.Facts, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	r := NewReader(c)
	defer r.Close()
	if c.Group > 0 {
		if err := r.listeners(); err != nil {
			return nil, err
		}
		return r.Record(), nil
	}
	err := c.Reads(ctx, r)
	if err == nil && c.TokenURL != nil {
		err = r.tokenLifespan(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := checkVersion(c, r.version); err != nil {
		return nil, err
	}
	if err := checkSources(r.facts); err != nil {
		return nil, fmt.Errorf("%s's readback: %w", c.Product, err)
	}
	return r.Record(), nil
}

// checkSources holds every fact to its source: one read names where from,
// one documented names its document by an https URL.
func checkSources(facts []schema.Fact) error {
	for _, f := range facts {
		switch {
		case f.Source == schema.FactDocumented && !strings.HasPrefix(f.From, "https://"):
			return fmt.Errorf("fact %q is documented without an https URL of its document (%q)", f.Name, f.From)
		case f.From == "":
			return fmt.Errorf("fact %q names no source", f.Name)
		}
	}
	return nil
}

// NewReader returns a reader of c (its Read, or a test of one product's
// ReadFacts); close its database with Close.
func NewReader(c Config) *Reader {
	r := &Reader{cfg: c, client: c.Client}
	if r.client == nil {
		r.client = &http.Client{Timeout: c.Timeout}
	}
	if r.cfg.Proc == "" {
		r.cfg.Proc = "/proc"
	}
	return r
}

// Record is the facts read so far, as readback prints them.
func (r *Reader) Record() *schema.Facts {
	return &schema.Facts{Schema: schema.FactsV1, Product: r.cfg.Product, Version: r.version,
		Read: time.Now().UTC(), Facts: r.facts}
}

// checkVersion fails when the product reports another version than the
// run states (c.WantVersion; "" = any).
func checkVersion(c Config, got string) error {
	if c.WantVersion != "" && got != c.WantVersion {
		return fmt.Errorf("%s reports version %q, the run states %q", c.Product, got, c.WantVersion)
	}
	return nil
}

// Reader collects the facts of one product.
type Reader struct {
	cfg     Config
	client  *http.Client
	db      *pgx.Conn
	version string
	facts   []schema.Fact
}

// Close closes the database connection the reader opened, if any.
func (r *Reader) Close() {
	if r.db != nil {
		_ = r.db.Close(context.Background())
	}
}

// Fact adds a fact read from where.
func (r *Reader) Fact(name, value, from string) {
	r.facts = append(r.facts, schema.Fact{Name: name, Value: value, Source: schema.FactRead, From: from})
}

// Documented adds a fact nothing running tells, with its document.
func (r *Reader) Documented(name, value, url string) {
	r.facts = append(r.facts, schema.Fact{Name: name, Value: value, Source: schema.FactDocumented, From: url})
}

// conn connects to the product's database on first use.
func (r *Reader) conn(ctx context.Context) (*pgx.Conn, error) {
	if r.db != nil {
		return r.db, nil
	}
	if r.cfg.Postgres == "" {
		return nil, cli.Usagef("--postgres: %s's facts are read from its database", r.cfg.Product)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	db, err := pgx.Connect(ctx, r.cfg.Postgres)
	if err != nil {
		return nil, fmt.Errorf("connecting to the product's database: %w", err)
	}
	r.db = db
	return db, nil
}

// Query runs sql and scans its rows with scan; what names it in errors.
func (r *Reader) Query(ctx context.Context, what, sql string, scan func(pgx.Rows) error, args ...any) error {
	db, err := r.conn(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		if err := scan(rows); err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("reading %s: no rows", what)
	}
	return nil
}

// Connections reads how many connections the product holds open to its
// database (pg_stat_activity), the pool as PostgreSQL sees it.
func (r *Reader) Connections(ctx context.Context) error {
	var n int64
	err := r.Query(ctx, "pg_stat_activity", `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`,
		func(rows pgx.Rows) error { return rows.Scan(&n) })
	if err != nil {
		return err
	}
	r.Fact("database connections open", fmt.Sprintf("%d (at the end of setup)", n),
		"PostgreSQL pg_stat_activity, backends of the product's database")
	return nil
}

// Get fetches u and returns its body (at most 4 MiB); a status other than
// 200 is an error.
func (r *Reader) Get(ctx context.Context, u *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	return r.do(req)
}

func (r *Reader) do(req *http.Request) ([]byte, error) {
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, logsafe.URL(req.URL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %w", req.Method, logsafe.URL(req.URL), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d: %s", req.Method, logsafe.URL(req.URL), resp.StatusCode, logsafe.Text(string(body)))
	}
	return body, nil
}

// Need fails naming the flag the product's facts need when missing.
func (r *Reader) Need(flag string, missing bool) error {
	if missing {
		return cli.Usagef("--%s: %s's facts need it", flag, r.cfg.Product)
	}
	return nil
}

// Config is where to read, as given.
func (r *Reader) Config() Config { return r.cfg }

// SetVersion records the version the product reports (checked against
// Config.WantVersion).
func (r *Reader) SetVersion(v string) { r.version = v }
