package sample

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgDSN returns the DSN of a throwaway PostgreSQL (env IDPBENCH_PG_DSN, as
// set up by scripts/lib/postgres.sh) or skips; with IDPBENCH_INTEGRATION=1 a
// missing DSN fails instead.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("IDPBENCH_PG_DSN")
	if dsn == "" {
		if os.Getenv("IDPBENCH_INTEGRATION") == "1" {
			t.Fatal("IDPBENCH_INTEGRATION=1 but IDPBENCH_PG_DSN is not set")
		}
		t.Skip("IDPBENCH_PG_DSN not set: no PostgreSQL to sample")
	}
	return dsn
}

// loadPostgres runs short transactions on its own connection until ctx ends.
func loadPostgres(ctx context.Context, t *testing.T, dsn string) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(context.Background())
	for ctx.Err() == nil {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, $1::int) AS idpbench_test_load", 20000).Scan(&n); err != nil && ctx.Err() == nil {
			t.Error(err)
			return
		}
	}
}

func TestPostgres(t *testing.T) {
	dsn := pgDSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); loadPostgres(ctx, t, dsn) }()
	defer func() { cancel(); wg.Wait() }()

	out := filepath.Join(t.TempDir(), "pg.jsonl")
	cfg := Config{PostgresDSN: dsn, PGReset: true, PSSEvery: time.Millisecond, Every: 250 * time.Millisecond, Duration: 1500 * time.Millisecond, Output: out}
	var stderr strings.Builder
	if err := Run(context.Background(), cfg, nil, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	recs := readSamples(t, out)["postgres"]
	if len(recs) < 4 {
		t.Fatalf("%d postgres records, stderr %q", len(recs), stderr.String())
	}
	var xact, cpu float64
	for _, r := range recs {
		xact += r.XactPerS
		cpu += r.CPUPct
		if r.Connections < 1 || r.Processes < 3 || r.RSSBytes <= 0 {
			t.Errorf("record %+v: want >= 1 connection (the load), >= 3 server processes, rss > 0", r)
		}
	}
	if xact/float64(len(recs)) < 5 || cpu <= 0 {
		t.Errorf("mean xact_per_s %.1f, cpu sum %.1f: the load should show", xact/float64(len(recs)), cpu)
	}
	last := recs[len(recs)-1]
	if len(last.TopQueries) == 0 || !strings.Contains(last.TopQueries[0].Query, "idpbench_test_load") || last.TopQueries[0].Calls < 5 {
		t.Errorf("top queries %+v, want the load first (stderr %q)", last.TopQueries, stderr.String())
	}
	for _, q := range last.TopQueries {
		if strings.Contains(q.Query, "idpbench-sampler") {
			t.Errorf("the sampler's own statement in top queries: %q", q.Query)
		}
	}
	for _, r := range recs[:len(recs)-1] {
		if len(r.TopQueries) != 0 {
			t.Errorf("top queries before the final record at %s", r.T)
		}
	}
}

func TestPostgresBadDSN(t *testing.T) {
	cfg := Config{PostgresDSN: "postgres://nobody:secretpw@127.0.0.1:1/none?connect_timeout=1", Every: time.Second}
	err := Run(context.Background(), cfg, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--postgres") || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("error %v: want a --postgres error without the password", err)
	}
}

func TestWarnTop(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&pgconn.PgError{Code: "42P01", Message: `relation "pg_stat_statements" does not exist`}, "extension is not installed"},
		{&pgconn.PgError{Code: "55000", Message: "pg_stat_statements must be loaded via shared_preload_libraries"}, "shared_preload_libraries (SQLSTATE 55000)"},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		(&pgSource{stderr: &stderr}).warnTop(tt.err)
		if !strings.Contains(stderr.String(), "no top queries") || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("warning %q lacks %q", stderr.String(), tt.want)
		}
	}
}
