package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/composefile"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
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
	// Compose mode: the compose PostgreSQL, while its containers run (images.json
	// says they came up; PGPASSFILE gives the password).
	if st.Compose() && a.Compose != nil && len(a.Compose.Images) > 0 {
		if a.Database, err = readDatabase(ctx, st); err != nil {
			fmt.Fprintf(stderr, "provision meta: warning: the record has no database version and settings: the compose PostgreSQL did not answer: %v\n", err)
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
	images, err := readImages(st.Path("images.json"))
	if err != nil {
		return nil, err
	}
	return &product.Compose{File: p.ComposeFile, MemoryLimit: memoryLimits(proj), Images: images}, nil
}

// readImages reads STATE/images.json (compose_images in
// scripts/lib/compose.sh), the images the containers ran; none when the
// file is not there (the product did not get that far).
func readImages(path string) ([]schema.Image, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var images []schema.Image
	if err := json.Unmarshal(b, &images); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, im := range images {
		if im.ID == "" || (im.Origin != schema.ImageOfficial && im.Origin != schema.ImageLocal) {
			return nil, fmt.Errorf("reading %s: service %q: want an id and origin %q or %q, got %q and %q",
				path, im.Service, schema.ImageOfficial, schema.ImageLocal, im.ID, im.Origin)
		}
	}
	return images, nil
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
