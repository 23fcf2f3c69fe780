package keycloak

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
)

// SummarySchema names the setup summary's format.
const SummarySchema = "idpbench.keycloak-setup/v1"

// FileUsersPassword is the users' shared password file in OutDir; the client
// secret's file is named after the client id.
const FileUsersPassword = "users-password"

// AudienceMapper is the name of the client's audience mapper.
const AudienceMapper = "bench-audience"

// prefix starts every progress line.
const prefix = "provision keycloak: "

// SetupConfig is one provisioning run.
type SetupConfig struct {
	BaseURL             string        // the server's root URL, e.g. http://127.0.0.1:8080
	AdminUser           string        // a master-realm admin (the bootstrap admin)
	AdminPassword       string        // its password: a secret
	Realm               string        // realm to create
	AccessTokenLifespan time.Duration // the realm's accessTokenLifespan (whole seconds)
	ClientID            string        // the confidential client to create
	RedirectURI         string        // its redirect URI (authorization code flow)
	Users               int           // users to create
	Username            string        // user name pattern; "%d" is replaced by 0..Users-1
	OutDir              string        // where the secret files go (must exist)
	Parallel            int           // concurrent user creations
	RequestTimeout      time.Duration // per HTTP request
	Progress            bool          // redraw a progress line (stderr is a TTY)
}

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *SetupConfig) Validate() error {
	u, err := url.Parse(c.BaseURL)
	r, rerr := url.Parse(c.RedirectURI)
	switch {
	case c.BaseURL == "":
		return cli.Usagef("--base-url: required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "":
		return cli.Usagef("--base-url: want an absolute http(s) URL, got %q", c.BaseURL)
	case c.AdminUser == "":
		return cli.Usagef("--admin-user: required")
	case c.AdminPassword == "":
		return cli.Usagef("--admin-password-file: required (or env IDPBENCH_KEYCLOAK_ADMIN_PASSWORD)")
	case !isName(c.Realm):
		return cli.Usagef("--realm: want a name of letters, digits, '-' and '_', got %q", c.Realm)
	case !isName(c.ClientID) || c.ClientID == FileUsersPassword:
		return cli.Usagef("--client-id: want a name of letters, digits, '-' and '_' (it names the secret file), got %q", c.ClientID)
	case c.AccessTokenLifespan < time.Second || c.AccessTokenLifespan%time.Second != 0:
		return cli.Usagef("--access-token-lifespan: want whole seconds >= 1s, got %s", c.AccessTokenLifespan)
	case rerr != nil || (r.Scheme != "http" && r.Scheme != "https") || r.Host == "" || r.Fragment != "":
		return cli.Usagef("--redirect-uri: want an absolute http(s) URL without fragment, got %q", c.RedirectURI)
	case c.Users < 1:
		return cli.Usagef("--users: must be >= 1, got %d", c.Users)
	case c.Username == "" || (c.Users > 1 && !strings.Contains(c.Username, "%d")):
		return cli.Usagef("--username: want a pattern with %%d for %d users, got %q", c.Users, c.Username)
	case c.OutDir == "":
		return cli.Usagef("--out-dir: required")
	case c.Parallel < 1:
		return cli.Usagef("-P/--parallel: must be >= 1, got %d", c.Parallel)
	case c.RequestTimeout <= 0:
		return cli.Usagef("--request-timeout: must be > 0, got %s", c.RequestTimeout)
	}
	return checkDir(c.OutDir)
}

func isName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
}

// checkDir fails, before anything is created in Keycloak, when dir is not a
// directory a file can be written to.
func checkDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return cli.Usagef("--out-dir: %s is not a directory", dir)
	}
	f, err := atomicfile.Create(filepath.Join(dir, FileUsersPassword), 0o600, nil)
	if err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	f.Abort()
	return nil
}

// Summary is what Setup prints on stdout: names, ids and file names, no secret.
type Summary struct {
	Schema                 string        `json:"schema"`
	BaseURL                string        `json:"base_url"`
	Issuer                 string        `json:"issuer"`
	Realm                  string        `json:"realm"`
	AccessTokenLifespanSec int           `json:"access_token_lifespan_s"` // seconds
	Client                 SummaryClient `json:"client"`
	Users                  SummaryUsers  `json:"users"`
}

// SummaryClient is the confidential client.
type SummaryClient struct {
	ClientID       string `json:"client_id"`
	ID             string `json:"id"` // the admin API's UUID
	SecretFile     string `json:"secret_file"`
	RedirectURI    string `json:"redirect_uri"`
	AudienceMapper string `json:"audience_mapper"`
}

// SummaryUsers describes the users.
type SummaryUsers struct {
	Pattern      string `json:"pattern"` // user names, "%d" = 0..count-1
	Count        int    `json:"count"`
	PasswordFile string `json:"password_file"`
}

// setup is one run's state: the secrets stay in memory until every call
// and the check succeeded, then both files are written.
type setup struct {
	cfg      *SetupConfig
	kc       *Client
	stderr   io.Writer
	sum      Summary
	client   ClientCreds
	password string // the users' shared password
}

// Setup provisions the realm, the client with its audience mapper and the
// users, checks each kind of measured request once, writes the client
// secret and the users' password (0600, atomically, both or none) and
// prints the summary JSON on stdout. Progress goes to stderr. A failure
// names the call and its HTTP status; objects created before it stay in
// Keycloak, no secret file is written.
func Setup(ctx context.Context, cfg SetupConfig, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: cfg.RequestTimeout, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: cfg.Parallel + 2,
	}}
	defer hc.CloseIdleConnections()
	s := &setup{cfg: &cfg, kc: New(cfg.BaseURL, cfg.AdminUser, cfg.AdminPassword, hc), stderr: stderr,
		client: ClientCreds{ID: cfg.ClientID, Secret: NewSecret()}, password: NewSecret()}
	base := strings.TrimRight(cfg.BaseURL, "/")
	s.sum = Summary{
		Schema: SummarySchema, BaseURL: base, Issuer: base + "/realms/" + cfg.Realm, Realm: cfg.Realm,
		AccessTokenLifespanSec: int(cfg.AccessTokenLifespan / time.Second),
		Client: SummaryClient{ClientID: cfg.ClientID, SecretFile: s.path(cfg.ClientID),
			RedirectURI: cfg.RedirectURI, AudienceMapper: AudienceMapper},
		Users: SummaryUsers{Pattern: cfg.Username, Count: cfg.Users, PasswordFile: s.path(FileUsersPassword)},
	}
	steps := []struct {
		what string
		fn   func(context.Context) error
	}{
		{"admin login as " + cfg.AdminUser, s.kc.Login},
		{fmt.Sprintf("realm %s (accessTokenLifespan %d s)", cfg.Realm, s.sum.AccessTokenLifespanSec), s.realm},
		{"client " + cfg.ClientID + " (confidential: client_credentials, password, authorization_code) with an audience mapper", s.clientAndMapper},
		{fmt.Sprintf("%d users %s..%s (one shared password)", cfg.Users, UserName(cfg.Username, 0), UserName(cfg.Username, cfg.Users-1)), s.users},
		{"check: client_credentials, introspection (active), password grant with a refresh token, userinfo", s.check},
		{"secret files in " + cfg.OutDir + ": " + cfg.ClientID + ", " + FileUsersPassword, s.writeFiles},
	}
	for i, st := range steps {
		fmt.Fprintf(stderr, "%s[%d/%d] %s\n", prefix, i+1, len(steps), st.what)
		if err := st.fn(ctx); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(s.sum)
}

func (s *setup) realm(ctx context.Context) error {
	return s.kc.CreateRealm(ctx, Realm{Name: s.cfg.Realm, AccessTokenLifespan: s.sum.AccessTokenLifespanSec})
}

func (s *setup) clientAndMapper(ctx context.Context) error {
	id, err := s.kc.CreateClient(ctx, s.cfg.Realm, ConfidentialClient{ClientID: s.cfg.ClientID, Secret: s.client.Secret, RedirectURI: s.cfg.RedirectURI})
	if err != nil {
		return err
	}
	s.sum.Client.ID = id
	return s.kc.AddAudienceMapper(ctx, s.cfg.Realm, id, AudienceMapper, s.cfg.ClientID)
}

// users creates the users with cfg.Parallel workers; the first failure
// stops the others and is returned.
func (s *setup) users(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	p := newProgress(s.stderr, s.cfg.Users, s.cfg.Progress)
	var wg sync.WaitGroup
	for range min(s.cfg.Parallel, s.cfg.Users) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < s.cfg.Users && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if err := s.kc.CreateUser(ctx, s.cfg.Realm, s.user(i)); err != nil {
					cancel(err)
					return
				}
				p.show(int(done.Add(1)))
			}
		})
	}
	wg.Wait()
	p.end()
	return context.Cause(ctx)
}

func (s *setup) user(i int) User {
	name := UserName(s.cfg.Username, i)
	return User{Username: name, Email: name + "@example.com", FirstName: "U", LastName: name, Password: s.password}
}

// check sends each kind of request the benchmark measures once, so that a
// broken setup fails here and not in a ladder: a client_credentials grant,
// its token's introspection (active only with the audience mapper), the
// password grant of the first user with scope openid (which S5 and S6 pools
// are minted with) and userinfo with its access token.
func (s *setup) check(ctx context.Context) error {
	realm := s.cfg.Realm
	at, err := s.kc.ClientCredentials(ctx, realm, s.client)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	active, err := s.kc.Introspect(ctx, realm, s.client, at)
	switch {
	case err != nil:
		return fmt.Errorf("check: %w", err)
	case !active:
		return fmt.Errorf("check: introspection as %s: a fresh client_credentials token is not active", s.client.ID)
	}
	user := UserName(s.cfg.Username, 0)
	at, _, err = s.kc.PasswordGrant(ctx, realm, s.client, user, s.password)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if _, err := s.kc.UserInfo(ctx, realm, at); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return nil
}

// writeFiles writes both secret files atomically; if the second fails, the
// first is removed.
func (s *setup) writeFiles(context.Context) error {
	secret := s.path(s.cfg.ClientID)
	if err := atomicfile.Write(secret, 0o600, []byte(s.client.Secret+"\n"), nil); err != nil {
		return err
	}
	if err := atomicfile.Write(s.path(FileUsersPassword), 0o600, []byte(s.password+"\n"), nil); err != nil {
		os.Remove(secret)
		return err
	}
	return nil
}

func (s *setup) path(name string) string { return filepath.Join(s.cfg.OutDir, name) }

// UserName is pattern with "%d" replaced by i.
func UserName(pattern string, i int) string {
	return strings.ReplaceAll(pattern, "%d", strconv.Itoa(i))
}

// NewSecret returns a random alphanumeric secret (26 characters of base32,
// 130 bits): Keycloak URL-decodes Basic credentials, so a secret stays
// clear of '%' and '+'.
func NewSecret() string { return rand.Text() }

// progress reports user creation: a redrawn line on a terminal, else a
// line at every tenth.
type progress struct {
	w     io.Writer
	total int
	tty   bool
	mu    sync.Mutex
	step  int
}

func newProgress(w io.Writer, total int, tty bool) *progress {
	return &progress{w: w, total: total, tty: tty, step: max(1, total/10)}
}

func (p *progress) show(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r%susers %d/%d\x1b[K", prefix, n, p.total)
	case n%p.step == 0 || n == p.total:
		fmt.Fprintf(p.w, "%susers %d/%d\n", prefix, n, p.total)
	}
}

func (p *progress) end() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
