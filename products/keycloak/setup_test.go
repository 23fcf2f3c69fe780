package keycloak

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products/keycloak/keycloaktest"
)

// lockedBuf is a concurrency-safe writer.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func setupConfig(f *keycloaktest.Fake, dir string) SetupConfig {
	return SetupConfig{
		BaseURL: f.URL, AdminUser: "admin", AdminPassword: f.AdminPassword, Realm: "bench",
		AccessTokenLifespan: time.Hour, ClientID: "bench-svc", RedirectURI: "http://127.0.0.1/cb",
		Users: 7, Username: "user%d", OutDir: dir, Parallel: 3, RequestTimeout: 5 * time.Second,
	}
}

// TestSetupEndToEnd provisions the fake (which refuses unknown fields, like
// Keycloak) and checks what was created, the two secret files and their
// mode, that they hold what Keycloak was given, and that no secret was
// printed.
func TestSetupEndToEnd(t *testing.T) {
	f := keycloaktest.NewFake(t)
	dir := t.TempDir()
	var stdout, stderr lockedBuf
	if err := Setup(context.Background(), setupConfig(f, dir), &stdout, &stderr); err != nil {
		t.Fatalf("Setup: %v\nstderr: %s", err, stderr.String())
	}
	var sum Summary
	if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	want := Summary{
		Schema: SummarySchema, BaseURL: f.URL, Issuer: f.URL + "/realms/bench", Realm: "bench", AccessTokenLifespanSec: 3600,
		Client: SummaryClient{ClientID: "bench-svc", ID: "uuid-1", SecretFile: filepath.Join(dir, "bench-svc"),
			RedirectURI: "http://127.0.0.1/cb", AudienceMapper: "bench-audience"},
		Users: SummaryUsers{Pattern: "user%d", Count: 7, PasswordFile: filepath.Join(dir, "users-password")},
	}
	if sum != want {
		t.Errorf("summary\n got %+v\nwant %+v", sum, want)
	}

	secret, password := readSecret(t, dir, "bench-svc"), readSecret(t, dir, FileUsersPassword)
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries in the out dir, want the 2 files", len(ents))
	}
	realm := f.Realm("bench")
	if realm == nil || !realm.Enabled || realm.Lifespan != 3600 {
		t.Fatalf("realm bench: %+v", realm)
	}
	c := realm.Clients["uuid-1"]
	if c == nil || c.Rep.Secret != secret || c.Rep.PublicClient == nil || *c.Rep.PublicClient ||
		!c.Rep.ServiceAccountsEnabled || !c.Rep.DirectAccessGrantsEnabled || !c.Rep.StandardFlowEnabled ||
		len(c.Rep.RedirectURIs) != 1 || c.Rep.RedirectURIs[0] != "http://127.0.0.1/cb" {
		t.Errorf("client: %+v", c)
	}
	if c != nil && (len(c.Mappers) != 1 || c.Mappers[0].Name != "bench-audience" || c.Mappers[0].Config["id.token.claim"] != "false") {
		t.Errorf("mappers: %+v", c.Mappers)
	}
	if len(realm.Users) != 7 {
		t.Errorf("%d users, want 7", len(realm.Users))
	}
	for _, name := range []string{"user0", "user6"} {
		u := realm.Users[name]
		if u.Password != password || u.Rep.Email != name+"@example.com" || !u.Rep.EmailVerified || !u.Rep.Enabled ||
			u.Rep.FirstName != "U" || u.Rep.LastName != name || *u.Rep.Credentials[0].Temporary {
			t.Errorf("%s: %+v", name, u)
		}
	}
	// The check sent one request of each kind.
	for route, n := range map[string]int{
		"POST /realms/{realm}/protocol/openid-connect/token":            3, // admin login, client_credentials, password
		"POST /realms/{realm}/protocol/openid-connect/token/introspect": 1,
		"GET /realms/{realm}/protocol/openid-connect/userinfo":          1,
		"POST /admin/realms/{realm}/users":                              7,
	} {
		if got := f.Count(route); got != n {
			t.Errorf("%s: %d calls, want %d", route, got, n)
		}
	}

	for what, s := range map[string]string{"client secret": secret, "users' password": password, "admin password": f.AdminPassword} {
		if strings.Contains(stdout.String(), s) || strings.Contains(stderr.String(), s) {
			t.Errorf("%s printed", what)
		}
	}
	for _, line := range []string{"[1/6] admin login as admin", "[2/6] realm bench (accessTokenLifespan 3600 s)",
		"[4/6] 7 users user0..user6", "users 7/7", "[6/6] secret files in " + dir} {
		if !strings.Contains(stderr.String(), "provision keycloak: "+line) {
			t.Errorf("progress lacks %q:\n%s", line, stderr.String())
		}
	}
}

// readSecret returns the one-line secret in dir/name, checking its mode.
func readSecret(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(p)
	s, ok := strings.CutSuffix(string(b), "\n")
	if !ok || len(s) < 20 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Errorf("%s = %q, want one alphanumeric secret line", name, b)
	}
	return s
}

// TestSetupFailures: each failure names the call and its HTTP status (or
// the transport error), and leaves no secret file.
func TestSetupFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(*keycloaktest.Fake, *SetupConfig)
		want    string
	}{
		{"wrong admin password", func(f *keycloaktest.Fake, c *SetupConfig) { c.AdminPassword = "wrong" },
			"admin login as admin (POST /realms/master/protocol/openid-connect/token): HTTP 400: invalid_grant Invalid user credentials"},
		{"realm exists", func(f *keycloaktest.Fake, c *SetupConfig) { f.AddRealm("bench") },
			"creating realm bench (POST /admin/realms): HTTP 409: Realm bench already exists"},
		{"a user fails", func(f *keycloaktest.Fake, c *SetupConfig) { f.FailUser = "user4" },
			"creating user user4 (POST /admin/realms/bench/users): HTTP 500: unknown_error"},
		{"server down", func(f *keycloaktest.Fake, c *SetupConfig) { f.Close() },
			"admin login as admin (POST /realms/master/protocol/openid-connect/token): dial tcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := keycloaktest.NewFake(t)
			dir := t.TempDir()
			cfg := setupConfig(f, dir)
			tc.prepare(f, &cfg)
			var stdout, stderr lockedBuf
			err := Setup(context.Background(), cfg, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if cli.ExitCode(err) != cli.ExitRuntime {
				t.Errorf("exit code %d, want %d", cli.ExitCode(err), cli.ExitRuntime)
			}
			if strings.Contains(err.Error(), f.AdminPassword) {
				t.Error("the error carries the admin password")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("out dir holds %d entries after a failure", len(ents))
			}
			if stdout.String() != "" {
				t.Errorf("stdout after a failure: %q", stdout.String())
			}
		})
	}
}

// TestCheckCatchesABrokenSetup: the check fails, naming what, when the
// audience mapper is missing (introspection inactive) or a grant is refused.
func TestCheckCatchesABrokenSetup(t *testing.T) {
	f := keycloaktest.NewFake(t)
	dir := t.TempDir()
	hc := &http.Client{Timeout: 5 * time.Second}
	kc := New(f.URL, "admin", f.AdminPassword, hc)
	ctx := context.Background()
	if err := kc.CreateRealm(ctx, Realm{Name: "bench", AccessTokenLifespan: 60}); err != nil {
		t.Fatal(err)
	}
	cc := ClientCreds{ID: "bench-svc", Secret: NewSecret()}
	if _, err := kc.CreateClient(ctx, "bench", ConfidentialClient{ClientID: cc.ID, Secret: cc.Secret, RedirectURI: "http://127.0.0.1/cb"}); err != nil {
		t.Fatal(err)
	}
	cfg := setupConfig(f, dir)
	s := &setup{cfg: &cfg, kc: kc, client: cc, password: NewSecret()}
	err := s.check(ctx)
	if want := "check: introspection as bench-svc: a fresh client_credentials token is not active"; err == nil || err.Error() != want {
		t.Errorf("without the mapper: %v, want %q", err, want)
	}
	s.client.Secret = "wrong"
	err = s.check(ctx)
	if want := "check: client_credentials grant as bench-svc (POST /realms/bench/protocol/openid-connect/token): HTTP 401: unauthorized_client"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("wrong secret: %v, want %q...", err, want)
	}
	s.client.Secret = cc.Secret
	if err := kc.AddAudienceMapper(ctx, "bench", "uuid-1", AudienceMapper, cc.ID); err != nil {
		t.Fatal(err)
	}
	err = s.check(ctx) // no user0 yet
	if want := "check: password grant for user0 (POST /realms/bench/protocol/openid-connect/token): HTTP 400: invalid_grant"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("no user: %v, want %q...", err, want)
	}
	if err := kc.CreateUser(ctx, "bench", s.user(0)); err != nil {
		t.Fatal(err)
	}
	if err := s.check(ctx); err != nil {
		t.Errorf("complete setup: %v", err)
	}
}

// TestAdminTokenRenewed: the admin token (60 s by default) is replaced once
// it has less than tokenMargin left, so a long setup keeps working.
func TestAdminTokenRenewed(t *testing.T) {
	f := keycloaktest.NewFake(t)
	f.TokenLife = 60
	now := time.Unix(1e9, 0)
	kc := New(f.URL, "admin", f.AdminPassword, &http.Client{Timeout: 5 * time.Second})
	kc.now = func() time.Time { return now }
	ctx := context.Background()
	const login = "POST /realms/{realm}/protocol/openid-connect/token"
	if err := kc.CreateRealm(ctx, Realm{Name: "r1", AccessTokenLifespan: 60}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(44 * time.Second) // 16 s left: reused
	if err := kc.CreateRealm(ctx, Realm{Name: "r2", AccessTokenLifespan: 60}); err != nil {
		t.Fatal(err)
	}
	if n := f.Count(login); n != 1 {
		t.Errorf("%d logins with the token still valid, want 1", n)
	}
	f.ExpireAdminTokens() // Keycloak would refuse it in a few seconds
	now = now.Add(2 * time.Second)
	if err := kc.CreateRealm(ctx, Realm{Name: "r3", AccessTokenLifespan: 60}); err != nil {
		t.Fatalf("after the margin: %v", err)
	}
	if n := f.Count(login); n != 2 {
		t.Errorf("%d logins, want 2", n)
	}
}

// TestSetupCancelled: a cancelled context stops setup with an error that
// maps to exit 130, and no secret file is written.
func TestSetupCancelled(t *testing.T) {
	f := keycloaktest.NewFake(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Setup(ctx, setupConfig(f, dir), &lockedBuf{}, &lockedBuf{})
	if !errors.Is(err, context.Canceled) || cli.ExitCode(err) != cli.ExitInterrupted {
		t.Errorf("error %v (exit %d), want context.Canceled (exit 130)", err, cli.ExitCode(err))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("out dir holds %d entries", len(ents))
	}
}

// TestValidate: bad configurations are usage errors naming the flag, found
// before any request.
func TestValidate(t *testing.T) {
	f := keycloaktest.NewFake(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		flag string
		mod  func(*SetupConfig)
	}{
		{"--base-url", func(c *SetupConfig) { c.BaseURL = "127.0.0.1:8080" }},
		{"--admin-password-file", func(c *SetupConfig) { c.AdminPassword = "" }},
		{"--realm", func(c *SetupConfig) { c.Realm = "a/b" }},
		{"--client-id", func(c *SetupConfig) { c.ClientID = "../x" }},
		{"--client-id", func(c *SetupConfig) { c.ClientID = FileUsersPassword }},
		{"--access-token-lifespan", func(c *SetupConfig) { c.AccessTokenLifespan = 1500 * time.Millisecond }},
		{"--redirect-uri", func(c *SetupConfig) { c.RedirectURI = "/cb" }},
		{"--users", func(c *SetupConfig) { c.Users = 0 }},
		{"--username", func(c *SetupConfig) { c.Username = "user" }},
		{"--out-dir", func(c *SetupConfig) { c.OutDir = filepath.Join(dir, "missing") }},
		{"-P/--parallel", func(c *SetupConfig) { c.Parallel = 0 }},
	} {
		cfg := setupConfig(f, dir)
		tc.mod(&cfg)
		err := Setup(context.Background(), cfg, &lockedBuf{}, &lockedBuf{})
		if cli.ExitCode(err) != cli.ExitUsage || !strings.HasPrefix(err.Error(), tc.flag+":") {
			t.Errorf("%s: error %v (exit %d), want a usage error naming it", tc.flag, err, cli.ExitCode(err))
		}
	}
	if n := f.Routes(); n != 0 {
		t.Errorf("%d routes called by invalid configurations", n)
	}
}
