package product

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// State is an adapter's state directory (scripts/lib/adapter.sh): the
// values state_set recorded in state.env, the files under it, the
// PostgreSQL cluster it recorded and the product's setup summary. Its
// getters record the first thing missing instead of failing each call, so
// a product's answers read as one table; Err (and, after setup, SetupErr)
// says whether they are complete.
type State struct {
	Dir     string
	Product string // names STATE/PRODUCT-setup.json
	env     map[string]string
	any     bool  // AnyState: every key answers
	err     error // the first value missing (up's)
	// setupErr: the setup summary is missing or unreadable, which fails only
	// the answers that come after setup (loadstep arguments and pools).
	setupErr error
}

// PGUser is the superuser of the shared PostgreSQL cluster, whom every
// product connects as (scripts/lib/postgres.sh PG_DB_USER).
const PGUser = "idpbench"

// ReadState reads dir/state.env.
func ReadState(dir, product string) (*State, error) {
	name := filepath.Join(dir, "state.env")
	env, err := readEnvFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no state in %s (run up first)", dir)
	}
	if err != nil {
		return nil, err
	}
	return &State{Dir: dir, Product: product, env: env}, nil
}

// AnyState is a state that answers every key with a value of its kind: a
// key ending in _PORT the port 8080, one naming a URL or the issuer a URL
// on 127.0.0.1:8080, any other "x". The product contract test (products)
// asks a product's answers with it, so that they show every scenario they
// run, and where, without a run.
func AnyState(dir, product string) *State {
	return &State{Dir: dir, Product: product, env: map[string]string{}, any: true}
}

// anyValue is AnyState's answer for key.
func anyValue(key string) string {
	switch {
	case strings.HasSuffix(key, "_PORT"):
		return "8080"
	case strings.Contains(key, "URL"), key == "ISSUER":
		return "http://127.0.0.1:8080/"
	}
	return "x"
}

// Get returns the value recorded as key; an empty or missing one is
// recorded as the state's error (state_get's rule).
func (s *State) Get(key string) string {
	if s.any && s.env[key] == "" {
		return anyValue(key)
	}
	v := s.env[key]
	if v == "" && s.err == nil {
		s.err = fmt.Errorf("%s is not recorded in %s (run up/setup first)", key, filepath.Join(s.Dir, "state.env"))
	}
	return v
}

// Opt returns the value recorded as key, "" when there is none (state_get_opt's
// rule: not an error).
func (s *State) Opt(key string) string {
	if s.any && s.env[key] == "" {
		return anyValue(key)
	}
	return s.env[key]
}

// Path returns a path under the state directory.
func (s *State) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Dir}, elem...)...)
}

// Secret returns the path of the secret file name (STATE/secrets/NAME,
// 0600): tools are given the path, never the value.
func (s *State) Secret(name string) string { return s.Path("secrets", name) }

// Compose reports whether the product was brought up in compose mode
// (scripts/lib/compose.sh records MODE=compose).
func (s *State) Compose() bool { return s.env["MODE"] == ModeCompose }

// Ports returns the recorded values whose key ends in _PORT (the ports the
// product and its helpers were given), by key.
func (s *State) Ports() map[string]string {
	out := map[string]string{}
	for k, v := range s.env {
		if strings.HasSuffix(k, "_PORT") {
			out[k] = v
		}
	}
	return out
}

// PGDir returns the directory of the PostgreSQL cluster the product uses:
// its private one, else the shared one (adapter_pg_use's order); "" when
// it recorded none.
func (s *State) PGDir() string {
	if dir := s.env["PG_PRIVATE_DIR"]; dir != "" {
		return dir
	}
	return s.env["PG_SHARED_DIR"]
}

// PGCluster returns PGDir while the cluster's pg.env is there; "" when
// the product recorded no cluster or it is gone (a private cluster's down
// removes its directory).
func (s *State) PGCluster() string {
	dir := s.PGDir()
	if fi, err := os.Stat(filepath.Join(dir, "pg.env")); dir == "" || err != nil || fi.Size() == 0 {
		return ""
	}
	return dir
}

// PGReported are the PostgreSQL settings a meta records in its database
// field, after server_version: the ones idpbench sets for every product
// (scripts/lib/postgres.sh PG_SETTINGS) and defaults that shape a
// product's database time.
var PGReported = []string{"max_connections", "shared_buffers", "shared_preload_libraries", "pg_stat_statements.track",
	"fsync", "synchronous_commit", "full_page_writes", "wal_level", "max_wal_size", "checkpoint_timeout",
	"work_mem", "effective_cache_size", "random_page_cost", "listen_addresses"}

// PGPort returns the port of the PostgreSQL cluster the product uses: its
// private one, else the shared one (adapter_pg_use's order), as that
// cluster's pg.env records it.
func (s *State) PGPort() string {
	dir := s.env["PG_PRIVATE_DIR"]
	if dir == "" {
		dir = s.Get("PG_SHARED_DIR")
	}
	if dir == "" {
		return ""
	}
	env, err := readEnvFile(filepath.Join(dir, "pg.env"))
	if err == nil && env["PG_PORT"] == "" {
		err = errors.New("no PG_PORT in it")
	}
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("the PostgreSQL cluster %s: %w", dir, err)
		}
		return ""
	}
	return env["PG_PORT"]
}

// SampleArgs are the sampler's arguments for a product its adapter started
// itself: its process group (pids/PRODUCT.pid) and, when it recorded a
// PostgreSQL cluster and a database (the first line of DIR/dbs), that
// database, its statistics reset first (--pg-reset) so that the top queries
// are this product's. In compose mode: the project's containers (idpbench-*)
// and its database on the compose PostgreSQL's port. The generic adapter
// answers its own.
func (s *State) SampleArgs() []string {
	if s.Compose() {
		return []string{"--docker", "idpbench-*", "--postgres", s.PGDSN(s.Get("COMPOSE_DB")), "--pg-reset"}
	}
	args := []string{"--pidfile", s.Path("pids", s.Product+".pid"), "--name", s.Product}
	if s.env["PG_PRIVATE_DIR"] == "" && s.env["PG_SHARED_DIR"] == "" {
		return args
	}
	b, err := os.ReadFile(s.Path("dbs"))
	if db, _, _ := strings.Cut(string(b), "\n"); err == nil && db != "" {
		args = append(args, "--postgres", s.PGDSN(db), "--pg-reset")
	}
	return args
}

// WithCluster connects to the shared PostgreSQL cluster's postgres
// database as PGUser and runs f on the connection, both within 15 s; the
// connection is closed after. A state without the cluster's port is its
// error (Err).
func (s *State) WithCluster(ctx context.Context, f func(ctx context.Context, conn *pgx.Conn) error) error {
	dsn := s.PGDSN("postgres")
	if err := s.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return f(ctx, conn)
}

// PGDSN returns the DSN of database db on the product's cluster (pg_dsn's;
// no password: trust authentication on loopback).
func (s *State) PGDSN(db string) string {
	port := ""
	if s.Compose() {
		port = s.Get("COMPOSE_PG_PORT") // the compose PostgreSQL's port, published on 127.0.0.1
	} else {
		port = s.PGPort()
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%s/%s?sslmode=disable", PGUser, port, db)
}

// Summary decodes STATE/PRODUCT-setup.json, what "provision PRODUCT"
// printed at setup, into v; a missing or bad one is SetupErr.
func (s *State) Summary(v any) {
	name := s.Path(s.Product + "-setup.json")
	b, err := os.ReadFile(name)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil && s.setupErr == nil {
		s.setupErr = fmt.Errorf("no setup summary %s (run setup first): %w", name, err)
	}
}

// Err is the first value an answer needed that was not recorded.
func (s *State) Err() error { return s.err }

// SetupErr is Err, or why the setup summary could not be read.
func (s *State) SetupErr() error {
	if s.err != nil {
		return s.err
	}
	return s.setupErr
}

var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// readEnvFile reads KEY=value lines as bash's `source` would assign them,
// for the values state_set writes (printf '%s=%q\n') and pg.env's
// KEY='value': a later line wins; blank lines and # comments are skipped.
// Anything that would expand or run something is an error naming the line.
func readEnvFile(name string) (map[string]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k, word, ok := strings.Cut(line, "=")
		if !ok || !envKey.MatchString(k) {
			return nil, fmt.Errorf("%s:%d: not a KEY=value line", name, n)
		}
		v, err := shellWord(word)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", name, n, k, err)
		}
		env[k] = v
	}
	return env, sc.Err()
}

// shellWord returns the value of one bash word as an assignment takes it:
// unquoted characters with backslash escapes, '...', "..." and $'...'
// (what printf %q writes: backslashes, or $'...' for control characters).
// Expansions ($x, `cmd`, a tilde where bash expands one) and unquoted
// blanks or operators are errors: state_set never writes them.
func shellWord(w string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(w); {
		c := w[i]
		switch {
		case c == '\\':
			if i+1 >= len(w) {
				return "", errors.New("a trailing backslash")
			}
			b.WriteByte(w[i+1])
			i += 2
		case c == '\'':
			j := strings.IndexByte(w[i+1:], '\'')
			if j < 0 {
				return "", errors.New("an unterminated '")
			}
			b.WriteString(w[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			n, err := doubleQuoted(w[i+1:], &b)
			if err != nil {
				return "", err
			}
			i += n + 2
		case strings.HasPrefix(w[i:], "$'"):
			n, err := ansiC(w[i+2:], &b)
			if err != nil {
				return "", err
			}
			i += n + 3
		case strings.IndexByte("$` \t;&|<>()", c) >= 0,
			c == '~' && (i == 0 || w[i-1] == ':' || w[i-1] == '='): // where bash expands a tilde
			return "", fmt.Errorf("an unquoted %q (an expansion or a second word)", c)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// doubleQuoted writes the value of "..." (s starts after the opening
// quote) and returns the length of its content.
func doubleQuoted(s string, b *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i, nil
		case '$', '`':
			return 0, fmt.Errorf("%q inside \"...\" (an expansion)", c)
		case '\\':
			if i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
				i++
				c = s[i]
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return 0, errors.New(`an unterminated "`)
}

// ansiC writes the value of $'...' (s starts after $') and returns the
// length of its content.
func ansiC(s string, b *strings.Builder) (int, error) {
	simple := map[byte]byte{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11,
		'\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return i, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		i++
		e := s[i]
		if v, ok := simple[e]; ok {
			b.WriteByte(v)
			continue
		}
		// \NNN octal, \xHH, \uHHHH, \UHHHHHHHH: the longest run of digits, up to the form's width.
		base, width, start := 8, 3, i
		switch e {
		case 'x':
			base, width, start = 16, 2, i+1
		case 'u':
			base, width, start = 16, 4, i+1
		case 'U':
			base, width, start = 16, 8, i+1
		}
		end := start
		for end < len(s) && end-start < width && isDigit(s[end], base) {
			end++
		}
		if end == start {
			b.WriteByte('\\') // bash keeps an unknown escape as it is
			b.WriteByte(e)
			continue
		}
		n, _ := strconv.ParseUint(s[start:end], base, 32)
		if e == 'u' || e == 'U' {
			b.WriteString(string(rune(n)))
		} else {
			b.WriteByte(byte(n))
		}
		i = end - 1
	}
	return 0, errors.New("an unterminated $'")
}

func isDigit(c byte, base int) bool {
	if base == 8 {
		return c >= '0' && c <= '7'
	}
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
