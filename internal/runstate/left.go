package runstate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idpbench/idpbench/internal/product"
)

// Left lists what an adapter's state directory dir (scripts/lib/adapter.sh)
// records that is still there after the product's down, one line each, in
// this order: a process a pidfile of dir/pids records (by pid alone, as
// the adapters write them), a live member of a process group dir/pgids
// lists, a port a *_PORT value of dir/state.env names that something still
// listens on (by key), a database dir/dbs lists that still exists on the
// product's PostgreSQL cluster (asked only while the cluster's pg.env
// exists: a private cluster's down removes it), a directory dir/dirs lists
// that still exists. An error means it cannot tell (an unreadable record,
// a cluster that does not answer); the lines found so far come with it.
func Left(ctx context.Context, dir, product string) ([]string, error) {
	var left []string
	for _, check := range []func() ([]string, error){
		func() ([]string, error) { return leftProcesses(dir) },
		func() ([]string, error) { return leftGroups(dir) },
		func() ([]string, error) { return leftRecorded(ctx, dir, product) },
		func() ([]string, error) { return leftDirs(dir) },
	} {
		l, err := check()
		left = append(left, l...)
		if err != nil {
			return left, err
		}
	}
	return left, nil
}

// leftProcesses: "process PID (NAME)" for each live pid of dir/pids/NAME.pid.
func leftProcesses(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	if err != nil {
		return nil, err
	}
	var left []string
	for _, f := range files {
		pid, _, err := readPidfile(f)
		if err != nil {
			return left, err
		}
		if pid != 0 && Running(pid) {
			left = append(left, fmt.Sprintf("process %d (%s)", pid, strings.TrimSuffix(filepath.Base(f), ".pid")))
		}
	}
	return left, nil
}

// leftGroups: "process group G: PID..." for each group of dir/pgids with
// live members.
func leftGroups(dir string) ([]string, error) {
	groups, err := lines(filepath.Join(dir, "pgids"))
	if err != nil {
		return nil, err
	}
	var left []string
	for _, g := range groups {
		pgid, err := strconv.Atoi(g)
		if err != nil || pgid <= 0 {
			return left, fmt.Errorf("%s: %q is not a process group", filepath.Join(dir, "pgids"), g)
		}
		if m := groupMembers(pgid); len(m) > 0 {
			left = append(left, fmt.Sprintf("process group %d: %s", pgid, strings.Trim(fmt.Sprint(m), "[]")))
		}
	}
	return left, nil
}

// leftRecorded: the ports state.env names that are bound, then the
// databases of dir/dbs that exist; nothing without a state.env.
func leftRecorded(ctx context.Context, dir, name string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "state.env")); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	st, err := product.ReadState(dir, name)
	if err != nil {
		return nil, err
	}
	left, err := leftPorts(st.Ports())
	if err != nil {
		return left, err
	}
	dbs, err := leftDatabases(ctx, st)
	return append(left, dbs...), err
}

// listenGrace is how long a port may still have its listener after the
// product's down: a process that has exited can take a moment to close
// its sockets. One that still listens after it is left.
const listenGrace = 5 * time.Second

// leftPorts: "port N (KEY)" for each port something still listens on, by
// key, naming the processes that hold the listener where /proc shows them.
func leftPorts(ports map[string]string) ([]string, error) {
	keys := make([]string, 0, len(ports))
	for k := range ports {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var left []string
	for _, k := range keys {
		if ports[k] == "" {
			continue
		}
		port, err := strconv.Atoi(ports[k])
		if err != nil || port <= 0 || port > 65535 {
			return left, fmt.Errorf("state.env: %s=%q is not a port", k, ports[k])
		}
		// Taken: left only when something listens on it (a connection
		// that took the port after the product stopped is not the product's).
		inodes, err := stillListening(port, listenGrace)
		if err != nil {
			return left, err
		}
		if len(inodes) > 0 {
			line := fmt.Sprintf("port %d (%s)", port, k)
			if h := holders("/proc", inodes); len(h) > 0 {
				line += ", listened on by " + strings.Join(h, ", ")
			}
			left = append(left, line)
		}
	}
	return left, nil
}

// stillListening: the inodes of port's listeners once grace has passed
// with one there all along; none as soon as the port is free or only
// connections hold it.
func stillListening(port int, grace time.Duration) ([]uint64, error) {
	deadline := time.Now().Add(grace)
	for {
		if PortFree(port) {
			return nil, nil
		}
		inodes, err := listeners("/proc/self", port)
		if err != nil || len(inodes) == 0 || !time.Now().Before(deadline) {
			return inodes, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leftDatabases: "database NAME" for each database of STATE/dbs that still
// exists on the product's cluster, asked only while its pg.env exists.
func leftDatabases(ctx context.Context, st *product.State) ([]string, error) {
	names, err := lines(st.Path("dbs"))
	if err != nil || len(names) == 0 {
		return nil, err
	}
	pgdir := st.PGCluster()
	if pgdir == "" {
		return nil, nil
	}
	exist, err := databasesExist(ctx, st, names)
	if err != nil {
		return nil, fmt.Errorf("asking the PostgreSQL cluster %s which of %s are left: %w", pgdir, strings.Join(names, ", "), err)
	}
	var left []string
	for _, n := range exist {
		left = append(left, "database "+n)
	}
	return left, nil
}

// databasesExist returns those of names that pg_database lists on st's
// cluster, in the order of names.
func databasesExist(ctx context.Context, st *product.State, names []string) ([]string, error) {
	var found []string
	err := st.WithCluster(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname = ANY($1)", names)
		if err != nil {
			return err
		}
		found, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	var out []string
	for _, n := range names {
		if slices.Contains(found, n) {
			out = append(out, n)
		}
	}
	return out, err
}

// leftDirs: "directory D" for each directory of dir/dirs that still exists.
func leftDirs(dir string) ([]string, error) {
	dirs, err := lines(filepath.Join(dir, "dirs"))
	if err != nil {
		return nil, err
	}
	var left []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			left = append(left, "directory "+d)
		}
	}
	return left, nil
}
