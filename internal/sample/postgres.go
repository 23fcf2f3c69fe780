package sample

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idpbench/idpbench/internal/schema"
)

// sqlTag marks the sampler's own statements so that pg_stat_statements'
// top queries leave them out (the normalised text keeps comments).
const sqlTag = "/* idpbench-sampler */ "

// statsSQL reads the cumulative counters in one round trip. $1 = every database.
const statsSQL = sqlTag + `SELECT
  coalesce(sum(xact_commit + xact_rollback), 0)::bigint,
  coalesce(sum(tup_returned + tup_fetched + tup_inserted + tup_updated + tup_deleted), 0)::bigint,
  (SELECT count(*) FROM pg_stat_activity
    WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
      AND ($1 OR datname = current_database()))
FROM pg_stat_database WHERE $1 OR datname = current_database()`

// topSQL lists the top statements by total time (PostgreSQL >= 13 names).
const topSQL = sqlTag + `SELECT query, calls, total_exec_time, mean_exec_time
FROM pg_stat_statements
WHERE query NOT LIKE '%%idpbench-sampler%%'
  AND ($1 OR dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))
ORDER BY total_exec_time DESC LIMIT %d`

// topQueries is how many statements the final record lists.
const topQueries = 10

// pgSource samples one PostgreSQL server over a single connection (no pool):
// transaction and row rates from pg_stat_database, client connections from
// pg_stat_activity, and the server's process tree (postmaster and backends)
// when it runs on this machine. The final record adds the top statements.
type pgSource struct {
	dsn        string
	all        bool
	conn       *pgx.Conn
	timeout    time.Duration
	tree       *Tree
	postmaster int   // 0 = not found (yet), -1 = not visible from here
	backend    int   // pid of our own backend
	ours       int64 // statistics queries we ran: our own transactions
	hwmXact    int64 // highest transaction count seen, less ours
	prevRows   int64
	have       bool
	stderr     io.Writer
	failing    bool
}

// openPostgres connects (a failure here is an error: the DSN is wrong) and
// resets pg_stat_statements when asked.
func openPostgres(ctx context.Context, cfg Config, stderr io.Writer) (*pgSource, error) {
	p := &pgSource{dsn: cfg.PostgresDSN, all: cfg.PGAllDatabases, stderr: stderr,
		timeout: max(cfg.Every, 2*time.Second), tree: NewTree(cfg.Hz, false)}
	if err := p.connect(ctx); err != nil {
		return nil, fmt.Errorf("--postgres: %w", err)
	}
	if cfg.PGReset {
		qctx, cancel := context.WithTimeout(ctx, p.timeout)
		defer cancel()
		if _, err := p.conn.Exec(qctx, sqlTag+"SELECT pg_stat_statements_reset()"); err != nil {
			fmt.Fprintf(stderr, "sampler: --pg-reset: %v; top queries cover the server's whole history\n", pgMessage(err))
		}
	}
	return p, nil
}

func (p *pgSource) connect(ctx context.Context) error {
	cc, err := pgx.ParseConfig(p.dsn)
	if err != nil {
		return errors.New("cannot parse the DSN") // the parse error may quote the password
	}
	cc.RuntimeParams["application_name"] = "idpbench-sampler"
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cc)
	if err != nil {
		return fmt.Errorf("connecting to database %q: %v", cc.Database, pgMessage(err))
	}
	p.conn, p.backend = conn, int(conn.PgConn().PID())
	p.warmUp(ctx)
	return nil
}

// warmUp runs the statistics query once and flushes our backend's
// statistics (PostgreSQL >= 15), so that the catalog reads of a new
// backend's first query do not show up as rows in the first intervals.
func (p *pgSource) warmUp(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var a, b, c int64
	if p.conn.QueryRow(qctx, statsSQL, p.all).Scan(&a, &b, &c) == nil {
		p.ours++
	}
	if _, err := p.conn.Exec(qctx, sqlTag+"SELECT pg_stat_force_next_flush()"); err == nil {
		p.ours++
	}
}

func (p *pgSource) collect(ctx context.Context, tk *tick, out []schema.Sample) []schema.Sample {
	rec := schema.Sample{Schema: schema.SampleV1, T: tk.now, Source: "postgres"}
	p.processes(tk, &rec)
	ctx = context.WithoutCancel(ctx) // a stop signal must not cut a query short
	if err := p.stats(ctx, tk, &rec); err != nil {
		p.fail(err)
	} else if p.failing {
		fmt.Fprintln(p.stderr, "sampler: postgres: statistics readable again")
		p.failing = false
	}
	if tk.final && p.conn != nil {
		rec.TopQueries = p.top(ctx)
	}
	if tk.baseline {
		return out
	}
	return append(out, rec)
}

// processes fills the server's CPU and memory from its process tree. The
// postmaster is our backend's parent; the tree holds every backend.
func (p *pgSource) processes(tk *tick, rec *schema.Sample) {
	if p.postmaster == 0 && p.backend > 0 {
		p.postmaster = -1
		if b := tk.procs.Get(p.backend); b != nil && tk.procs.Get(b.PPID) != nil {
			p.postmaster = b.PPID
		} else {
			fmt.Fprintf(p.stderr, "sampler: postgres: server processes not visible here (backend pid %d not in %s): no CPU/RSS for postgres; sample its container with --docker\n", p.backend, tk.procs.Root)
		}
	}
	if p.postmaster <= 0 {
		return
	}
	p.tree.PSS = tk.pss
	st := p.tree.Measure(tk.procs, []int{p.postmaster})
	rec.RSSBytes, rec.PSSBytes, rec.Threads, rec.Processes = st.RSSBytes, st.PSSBytes, st.Threads, st.Processes
	rec.CPUPct = tk.cpuPct(st.CPUTicks)
}

// stats fills the rates and connections, reconnecting after a failure.
func (p *pgSource) stats(ctx context.Context, tk *tick, rec *schema.Sample) error {
	if p.conn == nil {
		if err := p.connect(ctx); err != nil {
			return err
		}
		p.have = false // a new connection may be to a restarted server
		p.postmaster = 0
	}
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var xact, rows, conns int64
	p.ours++
	if err := p.conn.QueryRow(qctx, statsSQL, p.all).Scan(&xact, &rows, &conns); err != nil {
		p.conn.Close(ctx)
		p.conn = nil
		return err
	}
	rec.Connections = int(conns)
	// Our own statements are transactions too, but a backend publishes its
	// counts only every second or so: take ours out of the total and count
	// only growth above the highest value seen, so that a late flush of ours
	// is neither counted nor pushes a rate below zero.
	net := xact - p.ours
	if p.have && tk.dt > 0 {
		rec.XactPerS = round2(float64(max(net-p.hwmXact, 0)) / tk.dt)
		rec.RowsPerS = round2(float64(max(rows-p.prevRows, 0)) / tk.dt)
	}
	if !p.have || net > p.hwmXact {
		p.hwmXact = net
	}
	p.prevRows, p.have = rows, true
	return nil
}

// top returns the top statements by total time, or nil with a warning when
// pg_stat_statements is not available.
func (p *pgSource) top(ctx context.Context) []schema.Query {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	rows, err := p.conn.Query(qctx, fmt.Sprintf(topSQL, topQueries), p.all)
	if err != nil {
		p.warnTop(err)
		return nil
	}
	qs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (schema.Query, error) {
		var q schema.Query
		err := r.Scan(&q.Query, &q.Calls, &q.TotalMS, &q.MeanMS)
		q.TotalMS, q.MeanMS = round3(q.TotalMS), round3(q.MeanMS)
		return q, err
	})
	if err != nil {
		p.warnTop(err)
		return nil
	}
	return qs
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

func (p *pgSource) warnTop(err error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		fmt.Fprintln(p.stderr, "sampler: postgres: no top queries: the pg_stat_statements extension is not installed in this database (CREATE EXTENSION pg_stat_statements; it also needs shared_preload_libraries)")
		return
	}
	fmt.Fprintf(p.stderr, "sampler: postgres: no top queries: %v\n", pgMessage(err))
}

// fail warns once per outage.
func (p *pgSource) fail(err error) {
	if !p.failing {
		fmt.Fprintf(p.stderr, "sampler: postgres: reading statistics: %v (retrying every tick)\n", pgMessage(err))
		p.failing = true
	}
}

// pgMessage is the server's message for server errors, else the error.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return err.Error()
}

func (p *pgSource) close() {
	if p.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		p.conn.Close(ctx)
	}
}
