package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/composefile"
	"github.com/idpbench/idpbench/internal/product"
)

// runValues reads into a what the adapter's state directory dir records
// of the run: compose mode (MODE=compose: the entry's compose file and
// the memory limits of the COMPOSE_FILE up recorded), the endpoints of
// the product's scenario table unless the flags gave them (a table the
// state cannot fill is a warning and no endpoints, as the shell's loop
// left them out), and the version and settings of the product's
// PostgreSQL cluster while its pg.env is there. A directory without state.env (up never ran)
// records none of them.
func runValues(ctx context.Context, a *product.Adapter, dir string, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "state.env")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	st, err := product.ReadState(dir, a.Name)
	if err != nil {
		return err
	}
	if st.Compose() {
		if a.Compose, err = composeOf(st, a.Product); err != nil {
			return err
		}
		a.Inputs.Mode = product.ModeCompose
	}
	if a.Endpoints == nil {
		if a.Endpoints, err = a.Product.Endpoints(st); err != nil {
			fmt.Fprintf(stderr, "provision meta: warning: the record has no endpoints: %v\n", err)
		}
	}
	if pg := st.PGCluster(); pg != "" {
		if a.Database, err = readDatabase(ctx, st); err != nil {
			return fmt.Errorf("reading the version and settings of the PostgreSQL cluster %s: %w", pg, err)
		}
	}
	return nil
}

// composeOf is compose mode's additions: the product's compose file, as
// its entry declares it (from the repository root), and the memory limits
// of the services of the file up recorded.
func composeOf(st *product.State, p product.Product) (*product.Compose, error) {
	if p.ComposeFile == "" {
		return nil, fmt.Errorf("%s was brought up in compose mode (MODE=compose), but its entry declares no compose file (ComposeFile)", p.Name)
	}
	file := st.Get("COMPOSE_FILE")
	if err := st.Err(); err != nil {
		return nil, err
	}
	proj, err := composefile.Load(file)
	if err != nil {
		return nil, err
	}
	return &product.Compose{File: p.ComposeFile, MemoryLimit: memoryLimits(proj)}, nil
}

// readDatabase asks the product's cluster (its pg.env's port, on
// loopback) for server_version and the product.PGReported settings, as
// current_setting shows them ("256MB").
func readDatabase(ctx context.Context, st *product.State) (map[string]string, error) {
	db := map[string]string{}
	err := st.WithCluster(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT 'server_version', current_setting('server_version')
		UNION ALL SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)`, product.PGReported)
		if err != nil {
			return err
		}
		var k, v string
		_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
			db[k] = v
			return nil
		})
		return err
	})
	return db, err
}
