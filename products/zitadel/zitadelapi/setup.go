package zitadelapi

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
)

// SummarySchema names the setup summary's format.
const SummarySchema = "idpbench.zitadel-setup/v1"

// Secret files Setup writes into OutDir, each 0600.
const (
	FileAppKey        = "app-key.json"     // API app JSON key (private_key_jwt client assertions)
	FileM2MKey        = "m2m-key.json"     // machine user JSON key (jwt-bearer grant)
	FileCCSecret      = "cc-secret"        // machine user client secret (client_credentials)
	FileLoginClient   = "login-client.pat" // PAT of the IAM_LOGIN_CLIENT machine user
	FileWebSecret     = "web-secret"       // OIDC web app client secret
	FileUserPassword  = "user-password"    // the human users' common password
	defaultGatePeriod = 500 * time.Millisecond
)

// SetupConfig is one provisioning run.
type SetupConfig struct {
	Issuer          string        // Zitadel's external URL, e.g. http://localhost:8080
	PAT             string        // admin PAT (IAM_OWNER): a secret
	OrgID           string        // organization to provision in; "" = the admin's own
	OutDir          string        // where the secret files go (must exist)
	Prefix          string        // object names: <prefix>, <prefix>-api, -web, -m2m, -cc, -login-client
	Users           int           // human users to create
	Username        string        // user name pattern; "%d" is replaced by 0..Users-1
	RedirectURI     string        // the web app's redirect URI
	JWTAccessTokens bool          // machine users and web app get JWT access tokens (default opaque)
	Parallel        int           // concurrent human-user creations
	Timeout         time.Duration // readability gate deadline
	GateInterval    time.Duration // between two gate attempts; 0 = 500ms
	RequestTimeout  time.Duration // per HTTP request
	Progress        bool          // redraw a progress line (stderr is a TTY)
}

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *SetupConfig) Validate() error {
	u, err := url.Parse(c.Issuer)
	r, rerr := url.Parse(c.RedirectURI)
	switch {
	case c.Issuer == "":
		return cli.Usagef("--issuer: required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "":
		return cli.Usagef("--issuer: want an absolute http(s) URL, got %q", c.Issuer)
	case c.PAT == "":
		return cli.Usagef("--pat-file (or env IDPBENCH_ZITADEL_PAT): required")
	case c.OutDir == "":
		return cli.Usagef("--out-dir: required")
	case c.Users < 1:
		return cli.Usagef("--users: must be >= 1, got %d", c.Users)
	case c.Username == "" || (c.Users > 1 && !strings.Contains(c.Username, "%d")):
		return cli.Usagef("--username: want a pattern with %%d for %d users, got %q", c.Users, c.Username)
	case rerr != nil || (r.Scheme != "http" && r.Scheme != "https") || r.Host == "" || r.Fragment != "":
		return cli.Usagef("--redirect-uri: want an absolute http(s) URL without fragment, got %q", c.RedirectURI)
	case c.Prefix == "" || strings.ContainsAny(c.Prefix, " /%"):
		return cli.Usagef("--prefix: want a name without spaces, '/' or '%%', got %q", c.Prefix)
	case c.Parallel < 1:
		return cli.Usagef("-P/--parallel: must be >= 1, got %d", c.Parallel)
	case c.Timeout <= 0:
		return cli.Usagef("--timeout: must be > 0, got %s", c.Timeout)
	case c.RequestTimeout <= 0:
		return cli.Usagef("--request-timeout: must be > 0, got %s", c.RequestTimeout)
	}
	return checkDir(c.OutDir)
}

// checkDir fails, before anything is created in Zitadel, when dir is not a
// directory a file can be written to.
func checkDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return cli.Usagef("--out-dir: %s is not a directory", dir)
	}
	f, err := atomicfile.Create(filepath.Join(dir, FileUserPassword), 0o600, nil)
	if err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	f.Abort()
	return nil
}

// Summary is what Setup prints on stdout: ids and file names, no secret.
type Summary struct {
	Schema      string      `json:"schema"`
	Issuer      string      `json:"issuer"`
	OrgID       string      `json:"org_id"`
	ProjectID   string      `json:"project_id"`
	APIApp      SummaryApp  `json:"api_app"`
	M2M         SummaryKey  `json:"m2m"`
	CC          SummaryCC   `json:"cc"`
	LoginClient SummaryPAT  `json:"login_client"`
	Web         SummaryWeb  `json:"web"`
	Users       SummaryUser `json:"users"`
}

// SummaryApp is the private_key_jwt API app.
type SummaryApp struct {
	AppID    string `json:"app_id"`
	ClientID string `json:"client_id"`
	KeyID    string `json:"key_id"`
	KeyFile  string `json:"key_file"`
}

// SummaryKey is the jwt-bearer machine user.
type SummaryKey struct {
	UserID  string `json:"user_id"`
	KeyID   string `json:"key_id"`
	KeyFile string `json:"key_file"`
}

// SummaryCC is the client_credentials machine user.
type SummaryCC struct {
	UserID     string `json:"user_id"`
	ClientID   string `json:"client_id"`
	SecretFile string `json:"secret_file"`
}

// SummaryPAT is the login client (IAM_LOGIN_CLIENT) machine user.
type SummaryPAT struct {
	UserID  string `json:"user_id"`
	PATFile string `json:"pat_file"`
}

// SummaryWeb is the OIDC web app of the Session API login.
type SummaryWeb struct {
	AppID       string `json:"app_id"`
	ClientID    string `json:"client_id"`
	SecretFile  string `json:"secret_file"`
	RedirectURI string `json:"redirect_uri"`
}

// SummaryUser describes the human users.
type SummaryUser struct {
	Pattern          string `json:"pattern"`            // user names, "%d" = 0..count-1
	LoginNamePattern string `json:"login_name_pattern"` // what the Session API's loginName check takes
	Count            int    `json:"count"`
	PasswordFile     string `json:"password_file"`
}

// setup is one run's state: the secrets stay in memory until every call
// and the readability gate succeeded, then all files are written.
type setup struct {
	cfg     *SetupConfig
	admin   *Client // admin PAT, org-scoped once the org is known
	stderr  io.Writer
	sum     Summary
	files   map[string][]byte
	humans  []string // user ids by index
	loginPT string   // the login client's PAT
}

// Setup provisions everything the Zitadel benchmark needs, waits until it is
// readable, writes the secret files (0600, atomically, all or none) and
// prints the summary JSON on stdout. Progress goes to stderr. A failure
// names the call; objects created before it stay in Zitadel (re-run with
// another --prefix), no secret file is left.
func Setup(ctx context.Context, cfg SetupConfig, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.GateInterval <= 0 {
		cfg.GateInterval = defaultGatePeriod
	}
	hc := &http.Client{Timeout: cfg.RequestTimeout, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: cfg.Parallel + 2, ForceAttemptHTTP2: true,
	}}
	defer hc.CloseIdleConnections()
	s := &setup{cfg: &cfg, admin: New(cfg.Issuer, cfg.PAT, hc), stderr: stderr, files: map[string][]byte{}}
	s.sum = Summary{Schema: SummarySchema, Issuer: strings.TrimRight(cfg.Issuer, "/")}
	steps := []struct {
		what string
		fn   func(context.Context) error
	}{
		{"organization", s.org},
		{"project", s.project},
		{"API app (private_key_jwt) and its key", s.apiApp},
		{"machine user with a key (jwt-bearer)", s.m2m},
		{"machine user with a client secret (client_credentials)", s.cc},
		{"login client machine user (IAM_LOGIN_CLIENT) and its PAT", s.loginClient},
		{"OIDC web app (authorization code, refresh token)", s.web},
		{fmt.Sprintf("%d human users", cfg.Users), s.users},
		{"readability gate", s.gate},
		{"secret files in " + cfg.OutDir, s.writeFiles},
	}
	for i, st := range steps {
		fmt.Fprintf(stderr, "provision zitadel: [%d/%d] %s\n", i+1, len(steps), st.what)
		if err := st.fn(ctx); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(s.sum)
}

func (s *setup) org(ctx context.Context) error {
	id := s.cfg.OrgID
	if id == "" {
		o, err := s.admin.MyOrg(ctx)
		if err != nil {
			return err
		}
		id = o.ID
	}
	s.sum.OrgID = id
	s.admin = s.admin.WithOrg(id)
	return nil
}

func (s *setup) project(ctx context.Context) (err error) {
	s.sum.ProjectID, err = s.admin.AddProject(ctx, s.cfg.Prefix)
	return err
}

func (s *setup) apiApp(ctx context.Context) error {
	app, err := s.admin.AddAPIApp(ctx, s.sum.ProjectID, s.cfg.Prefix+"-api")
	if err != nil {
		return err
	}
	key, err := s.admin.AddAppKey(ctx, s.sum.ProjectID, app.AppID)
	if err != nil {
		return err
	}
	s.files[FileAppKey] = key.File
	s.sum.APIApp = SummaryApp{AppID: app.AppID, ClientID: app.ClientID, KeyID: key.ID, KeyFile: s.path(FileAppKey)}
	return nil
}

func (s *setup) m2m(ctx context.Context) error {
	id, err := s.admin.AddMachineUser(ctx, s.cfg.Prefix+"-m2m", s.cfg.JWTAccessTokens)
	if err != nil {
		return err
	}
	key, err := s.admin.AddMachineKey(ctx, id)
	if err != nil {
		return err
	}
	s.files[FileM2MKey] = key.File
	s.sum.M2M = SummaryKey{UserID: id, KeyID: key.ID, KeyFile: s.path(FileM2MKey)}
	return nil
}

func (s *setup) cc(ctx context.Context) error {
	id, err := s.admin.AddMachineUser(ctx, s.cfg.Prefix+"-cc", s.cfg.JWTAccessTokens)
	if err != nil {
		return err
	}
	cred, err := s.admin.GenerateMachineSecret(ctx, id)
	if err != nil {
		return err
	}
	s.files[FileCCSecret] = []byte(cred.ClientSecret + "\n")
	s.sum.CC = SummaryCC{UserID: id, ClientID: cred.ClientID, SecretFile: s.path(FileCCSecret)}
	return nil
}

func (s *setup) loginClient(ctx context.Context) error {
	id, err := s.admin.AddMachineUser(ctx, s.cfg.Prefix+"-login-client", false)
	if err != nil {
		return err
	}
	if err := s.admin.AddIAMMember(ctx, id, "IAM_LOGIN_CLIENT"); err != nil {
		return err
	}
	pat, err := s.admin.AddPersonalAccessToken(ctx, id)
	if err != nil {
		return err
	}
	s.loginPT = pat.Token
	s.files[FileLoginClient] = []byte(pat.Token + "\n")
	s.sum.LoginClient = SummaryPAT{UserID: id, PATFile: s.path(FileLoginClient)}
	return nil
}

func (s *setup) web(ctx context.Context) error {
	app, err := s.admin.AddOIDCApp(ctx, s.sum.ProjectID, WebApp{
		Name: s.cfg.Prefix + "-web", RedirectURI: s.cfg.RedirectURI, JWTAccessTokens: s.cfg.JWTAccessTokens,
	})
	if err != nil {
		return err
	}
	s.files[FileWebSecret] = []byte(app.ClientSecret + "\n")
	s.sum.Web = SummaryWeb{AppID: app.AppID, ClientID: app.ClientID, SecretFile: s.path(FileWebSecret), RedirectURI: s.cfg.RedirectURI}
	return nil
}

// users creates the human users with cfg.Parallel workers; the first
// failure stops the others and is returned.
func (s *setup) users(ctx context.Context) error {
	password := NewPassword()
	s.files[FileUserPassword] = []byte(password + "\n")
	s.sum.Users = SummaryUser{Pattern: s.cfg.Username, LoginNamePattern: s.cfg.Username, Count: s.cfg.Users, PasswordFile: s.path(FileUserPassword)}
	s.humans = make([]string, s.cfg.Users)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	p := newProgress(s.stderr, s.cfg.Users, s.cfg.Progress)
	var wg sync.WaitGroup
	for range min(s.cfg.Parallel, s.cfg.Users) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < s.cfg.Users && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				id, err := s.admin.AddHumanUser(ctx, s.human(i, password))
				if err != nil {
					cancel(fmt.Errorf("human user %d (%s): %w", i, UserName(s.cfg.Username, i), err))
					return
				}
				s.humans[i] = id
				p.show(int(done.Add(1)))
			}
		})
	}
	wg.Wait()
	p.end()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

func (s *setup) human(i int, password string) Human {
	name := UserName(s.cfg.Username, i)
	email := name
	if !strings.Contains(name, "@") {
		email = name + "@example.com"
	}
	return Human{Username: name, OrgID: s.sum.OrgID, GivenName: "Bench", FamilyName: "User " + strconv.Itoa(i), Email: email, Password: password}
}

// gate waits until discovery is clean and every created object (and the
// login client's PAT) is readable; the last human's preferred login name
// gives the login name pattern.
func (s *setup) gate(ctx context.Context) error {
	last := len(s.humans) - 1
	lc := s.admin.WithToken(s.loginPT)
	g := Gate{Timeout: s.cfg.Timeout, Interval: s.cfg.GateInterval, Checks: []Check{
		{Name: "discovery", Fn: func(ctx context.Context) error { return s.admin.Discovery(ctx, s.cfg.Issuer) }},
		s.userCheck("m2m user", s.sum.M2M.UserID),
		s.userCheck("cc user", s.sum.CC.UserID),
		s.userCheck("login client user", s.sum.LoginClient.UserID),
		s.appCheck("API app", s.sum.APIApp.AppID),
		s.appCheck("web app", s.sum.Web.AppID),
		{Name: "login client membership IAM_LOGIN_CLIENT", Fn: s.memberCheck},
		{Name: "login client PAT", RetryUnauthorized: true, Fn: func(ctx context.Context) error {
			id, err := lc.Me(ctx)
			if err == nil && id != s.sum.LoginClient.UserID {
				err = fmt.Errorf("the login client PAT belongs to user %s, not %s", id, s.sum.LoginClient.UserID)
			}
			return err
		}},
		{Name: "human user " + strconv.Itoa(last) + " (the last)", Fn: func(ctx context.Context) error {
			u, err := s.admin.GetUser(ctx, s.humans[last])
			if err == nil {
				s.sum.Users.LoginNamePattern = loginNamePattern(s.cfg.Username, UserName(s.cfg.Username, last), u.PreferredLoginName)
			}
			return err
		}},
	}}
	return g.Wait(ctx)
}

func (s *setup) userCheck(what, id string) Check {
	return Check{Name: what + " " + id, Fn: func(ctx context.Context) error {
		_, err := s.admin.GetUser(ctx, id)
		return err
	}}
}

func (s *setup) appCheck(what, id string) Check {
	return Check{Name: what + " " + id, Fn: func(ctx context.Context) error {
		_, err := s.admin.GetApp(ctx, s.sum.ProjectID, id)
		return err
	}}
}

// memberCheck waits until the instance membership of the login client is
// listed with IAM_LOGIN_CLIENT: until then, its Session API calls are
// refused for lack of permission.
func (s *setup) memberCheck(ctx context.Context) error {
	members, err := s.admin.ListIAMMembers(ctx)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.UserID == s.sum.LoginClient.UserID && slices.Contains(m.Roles, "IAM_LOGIN_CLIENT") {
			return nil
		}
	}
	return &APIError{Call: "ListIAMMembers (POST /admin/v1/members/_search)", Status: http.StatusNotFound,
		Message: "login client " + s.sum.LoginClient.UserID + " not listed with IAM_LOGIN_CLIENT yet"}
}

// loginNamePattern derives the login name pattern from one user's
// preferred login name: the user name itself, or the user name with an org
// domain suffix when the domain policy requires one (userLoginMustBeDomain).
func loginNamePattern(pattern, name, preferred string) string {
	if suffix, ok := strings.CutPrefix(preferred, name); ok && preferred != "" {
		return pattern + suffix
	}
	return pattern
}

// writeFiles writes every secret file atomically; if one fails, the ones
// already written by this run are removed.
func (s *setup) writeFiles(context.Context) error {
	var written []string
	for _, name := range []string{FileAppKey, FileM2MKey, FileCCSecret, FileLoginClient, FileWebSecret, FileUserPassword} {
		p := s.path(name)
		if err := atomicfile.Write(p, 0o600, s.files[name], nil); err != nil {
			for _, w := range written {
				os.Remove(w)
			}
			return err
		}
		written = append(written, p)
	}
	return nil
}

func (s *setup) path(name string) string { return filepath.Join(s.cfg.OutDir, name) }

// UserName is pattern with "%d" replaced by i.
func UserName(pattern string, i int) string {
	return strings.ReplaceAll(pattern, "%d", strconv.Itoa(i))
}

// NewPassword returns a random password that meets Zitadel's default
// complexity policy (length >= 8 with upper and lower case, a digit and a
// symbol) and stays under bcrypt's 72 bytes.
func NewPassword() string {
	return "Ib-7x-" + rand.Text()
}

// progress reports human-user creation: a redrawn line on a terminal,
// else a line at every tenth.
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
		fmt.Fprintf(p.w, "\rprovision zitadel: human users %d/%d\x1b[K", n, p.total)
	case n%p.step == 0 || n == p.total:
		fmt.Fprintf(p.w, "provision zitadel: human users %d/%d\n", n, p.total)
	}
}

func (p *progress) end() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
