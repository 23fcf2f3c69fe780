package runstate

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// adapterState writes an adapter's state directory: state.env (as
// state_set's printf %q writes it), pids, pgids, dirs and dbs.
func adapterState(t *testing.T, dir string, env map[string]string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k, v := range env {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	files["state.env"] = b.String()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeft: a live pidfile's process, a process group's member, a bound
// port of a *_PORT key (quoted as printf %q quotes), a directory: each
// named, in Left's order; a dead pidfile, a free port, a key that is not a
// port's, a removed directory: not. Without a recorded cluster the
// databases are not asked.
func TestLeft(t *testing.T) {
	dir := t.TempDir()
	proc := sleeper(t, dir, false)
	group := sleeper(t, dir, true)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bound := l.Addr().(*net.TCPAddr).Port
	free := freePort(t)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	adapterState(t, state, map[string]string{
		"HYDRA_PUBLIC_PORT": strconv.Itoa(bound),
		"HYDRA_ADMIN_PORT":  "'" + strconv.Itoa(free) + "'",
		"HYDRA_VERSION":     strconv.Itoa(bound), // not a *_PORT key
		"ISSUER":            "http://127.0.0.1:" + strconv.Itoa(bound) + "/",
	}, map[string]string{
		"pgids": strconv.Itoa(group.Process.Pid) + "\n",
		"dirs":  data + "\n" + filepath.Join(dir, "gone") + "\n",
		"dbs":   "hydra\n",
	})
	writePid(t, filepath.Join(state, "pids", "hydra.pid"), proc.Process.Pid)
	writePid(t, filepath.Join(state, "pids", "gone.pid"), deadPID(t))

	got, err := Left(context.Background(), state, "hydra")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("process %d (hydra)", proc.Process.Pid),
		fmt.Sprintf("process group %d: %d", group.Process.Pid, group.Process.Pid),
		fmt.Sprintf("port %d (HYDRA_PUBLIC_PORT), listened on by pid %d (%s)", bound, os.Getpid(), comm(t)),
		"directory " + data,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Left =\n%q\nwant\n%q", got, want)
	}
}

// TestLeftNothing: after everything stopped, closed and removed, nothing is
// left; a state directory without any record has nothing left either.
func TestLeftNothing(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	adapterState(t, state, map[string]string{"PUBLIC_PORT": strconv.Itoa(freePort(t))}, map[string]string{
		"dirs": filepath.Join(dir, "gone") + "\n",
	})
	writePid(t, filepath.Join(state, "pids", "gone.pid"), deadPID(t))
	for _, d := range []string{state, t.TempDir()} {
		if got, err := Left(context.Background(), d, "refop"); err != nil || len(got) != 0 {
			t.Errorf("Left(%s) = %q, %v; want nothing", d, got, err)
		}
	}
}

// TestLeftCannotTell: a *_PORT value that is not a port, a state.env bash
// would not read as state_set wrote it, a cluster that does not answer:
// errors, not "nothing left".
func TestLeftCannotTell(t *testing.T) {
	for name, c := range map[string]struct {
		env   map[string]string
		files map[string]string
	}{
		"not a port":     {map[string]string{"PUBLIC_PORT": "http"}, map[string]string{}},
		"expansion":      {map[string]string{"PUBLIC_PORT": "$(id)"}, map[string]string{}},
		"cluster silent": {map[string]string{}, map[string]string{"dbs": "hydra\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			if name == "cluster silent" {
				pg := t.TempDir()
				c.env["PG_PRIVATE_DIR"] = pg
				if err := os.WriteFile(filepath.Join(pg, "pg.env"), fmt.Appendf(nil, "PG_PORT='%d'\n", freePort(t)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			adapterState(t, state, c.env, c.files)
			if got, err := Left(context.Background(), state, "hydra"); err == nil {
				t.Errorf("Left = %q, nil; want an error", got)
			}
		})
	}
}

// TestLeftDatabases asks a real PostgreSQL (IDPBENCH_PG_DSN, as
// scripts/test.sh sets it for the integration runs; skipped without it):
// the cluster the state records through its pg.env's port, a database
// that exists (postgres) named, one that does not not; a removed pg.env
// (a private cluster's down) is not asked.
func TestLeftDatabases(t *testing.T) {
	dsn := os.Getenv("IDPBENCH_PG_DSN")
	if dsn == "" {
		t.Skip("IDPBENCH_PG_DSN not set: no PostgreSQL to ask")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pg := t.TempDir()
	pgenv := filepath.Join(pg, "pg.env")
	if err := os.WriteFile(pgenv, fmt.Appendf(nil, "PG_PORT='%d'\n", cfg.Port), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	adapterState(t, state, map[string]string{"PG_SHARED_DIR": pg}, map[string]string{"dbs": "postgres\nidpbench_never_created\n"})
	got, err := Left(context.Background(), state, "hydra")
	if err != nil || !slices.Equal(got, []string{"database postgres"}) {
		t.Errorf("Left = %q, %v; want database postgres", got, err)
	}
	if err := os.Remove(pgenv); err != nil {
		t.Fatal(err)
	}
	if got, err := Left(context.Background(), state, "hydra"); err != nil || len(got) != 0 {
		t.Errorf("Left without pg.env = %q, %v; want nothing asked", got, err)
	}
}

// freePort is a loopback port free right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writePid(t *testing.T, path string, pid int) {
	t.Helper()
	if err := os.WriteFile(path, fmt.Appendf(nil, "%d\n", pid), 0o644); err != nil {
		t.Fatal(err)
	}
}

// comm is this process's name as /proc/self/comm says it.
func comm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
