package zitadelapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/mint"
	"github.com/idpbench/idpbench/products/zitadel/zitadeltest"
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

func setupConfig(f *zitadeltest.Fake, dir string) SetupConfig {
	return SetupConfig{
		Issuer: f.URL, PAT: f.AdminPAT, OutDir: dir, Prefix: "idpbench", Users: 7, Username: "bench-user%d",
		RedirectURI: "http://localhost:9999/cb", Parallel: 3, Timeout: 10 * time.Second,
		GateInterval: 5 * time.Millisecond, RequestTimeout: 5 * time.Second,
	}
}

// TestSetupEndToEnd provisions against the recorded Zitadel (which checks
// every request's shape) with a lagging projection, then checks the files,
// their mode, and that the summary holds ids but no secret.
func TestSetupEndToEnd(t *testing.T) {
	f := zitadeltest.NewFake(t)
	f.Lag, f.LoginSuffix = 3, "@zitadel.localhost"
	dir := t.TempDir()
	var stdout, stderr lockedBuf
	if err := Setup(context.Background(), setupConfig(f, dir), &stdout, &stderr); err != nil {
		t.Fatalf("Setup: %v\nstderr: %s", err, stderr.String())
	}
	var sum Summary
	if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if sum.Schema != SummarySchema || sum.OrgID != f.OrgID || sum.ProjectID == "" || sum.Issuer != f.URL ||
		sum.APIApp.ClientID == "" || sum.M2M.KeyID == "" || sum.CC.ClientID != "idpbench-cc" || sum.LoginClient.UserID == "" ||
		sum.Web.ClientID == "" || sum.Web.RedirectURI != "http://localhost:9999/cb" || sum.Users.Count != 7 ||
		sum.Users.Pattern != "bench-user%d" || sum.Users.LoginNamePattern != "bench-user%d@zitadel.localhost" {
		t.Errorf("summary %+v", sum)
	}
	if f.HumanUsers() != 7 || f.Calls("AddHumanUser") != 7 {
		t.Errorf("%d human users, %d AddHumanUser calls, want 7", f.HumanUsers(), f.Calls("AddHumanUser"))
	}
	// The gate read until the lag was over: Lag+1 reads of the last human.
	if n := f.Calls("GetUserByID"); n < 4*(f.Lag+1) {
		t.Errorf("%d GetUserByID calls, want >= %d (4 users, lag %d)", n, 4*(f.Lag+1), f.Lag)
	}

	files := map[string]string{}
	for _, name := range []string{FileAppKey, FileM2MKey, FileCCSecret, FileLoginClient, FileWebSecret, FileUserPassword} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
		b, _ := os.ReadFile(p)
		files[name] = string(b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("%d entries in the out dir, want the 6 files", len(ents))
	}
	checkKey(t, files[FileAppKey], "application", sum.APIApp.KeyID)
	checkKey(t, files[FileM2MKey], "serviceaccount", sum.M2M.KeyID)
	for _, name := range []string{FileCCSecret, FileLoginClient, FileWebSecret, FileUserPassword} {
		s := strings.TrimSuffix(files[name], "\n")
		if len(s) < 16 || strings.ContainsAny(s, " \n") {
			t.Errorf("%s = %q, want one secret line", name, files[name])
		}
		if strings.Contains(stdout.String(), s) || strings.Contains(stderr.String(), s) {
			t.Errorf("secret of %s printed", name)
		}
	}
	if strings.Contains(stdout.String(), f.AdminPAT) || strings.Contains(stderr.String(), f.AdminPAT) {
		t.Error("admin PAT printed")
	}
	for _, k := range []string{"key", "PRIVATE"} {
		if strings.Contains(stdout.String(), "\""+k+"\"") || strings.Contains(stdout.String(), k+" KEY") {
			t.Errorf("summary has a key: %s", stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "[10/10] secret files") || !strings.Contains(stderr.String(), "human users 7/7") {
		t.Errorf("progress: %s", stderr.String())
	}
}

func checkKey(t *testing.T, data, typ, id string) {
	t.Helper()
	var kf mint.KeyFile
	if err := json.Unmarshal([]byte(data), &kf); err != nil || kf.Type != typ || kf.KeyID != id ||
		!strings.HasPrefix(kf.Key, "-----BEGIN RSA PRIVATE KEY-----") {
		t.Errorf("key file %s: %+v (%v)", typ, kf, err)
	}
}

// TestSetupFailures: a failure names the call and leaves no file behind.
func TestSetupFailures(t *testing.T) {
	tests := []struct {
		name string
		mod  func(f *zitadeltest.Fake, c *SetupConfig)
		want []string
	}{
		{"wrong admin PAT", func(f *zitadeltest.Fake, c *SetupConfig) { c.PAT = "not-the-pat" },
			[]string{"GetMyOrg (GET /management/v1/orgs/me)", "HTTP 401", "Errors.Token.Invalid"}},
		{"project exists", func(f *zitadeltest.Fake, c *SetupConfig) { f.FailCall, f.FailStatus = "AddProject", 409 },
			[]string{"AddProject (POST /management/v1/projects)", "HTTP 409"}},
		{"web app refused", func(f *zitadeltest.Fake, c *SetupConfig) { f.FailCall, f.FailStatus = "AddOIDCApp", 403 },
			[]string{"AddOIDCApp (POST /management/v1/projects/", "/apps/oidc)", "HTTP 403"}},
		{"fifth human fails", func(f *zitadeltest.Fake, c *SetupConfig) {
			f.FailCall, f.FailStatus, f.FailAfter, c.Parallel = "AddHumanUser", 500, 4, 1
		}, []string{"human user 4 (bench-user4)", "AddHumanUser (POST /v2/users/human)", "HTTP 500"}},
		{"projection never catches up", func(f *zitadeltest.Fake, c *SetupConfig) { f.Lag, c.Timeout = 1<<20, 200*time.Millisecond },
			[]string{"readability gate", "m2m user", "not readable within 200ms", "GetUserByID (GET /v2/users/", "HTTP 404"}},
		{"app read refused", func(f *zitadeltest.Fake, c *SetupConfig) { f.FailCall, f.FailStatus = "GetAppByID", 403 },
			[]string{"readability gate: API app", "GetAppByID", "HTTP 403"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := zitadeltest.NewFake(t)
			dir := t.TempDir()
			cfg := setupConfig(f, dir)
			tt.mod(f, &cfg)
			var stdout, stderr lockedBuf
			err := Setup(context.Background(), cfg, &stdout, &stderr)
			if err == nil {
				t.Fatal("Setup succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), f.AdminPAT) || stdout.String() != "" {
				t.Errorf("error %q / stdout %q", err, stdout.String())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("files left behind: %v", ents)
			}
		})
	}
}

func TestSetupInterrupted(t *testing.T) {
	f := zitadeltest.NewFake(t)
	f.Lag = 1 << 20
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := setupConfig(f, dir)
	time.AfterFunc(100*time.Millisecond, cancel)
	err := Setup(ctx, cfg, &lockedBuf{}, &lockedBuf{})
	if !errors.Is(err, context.Canceled) || cli.ExitCode(err) != cli.ExitInterrupted {
		t.Errorf("error %v, want an interruption", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left behind: %v", ents)
	}
}

func TestSetupValidate(t *testing.T) {
	dir := t.TempDir()
	ok := SetupConfig{Issuer: "http://localhost:8080", PAT: "p", OutDir: dir, Prefix: "idpbench", Users: 2, Username: "u%d",
		RedirectURI: "http://localhost:9999/cb", Parallel: 1, Timeout: time.Second, RequestTimeout: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	tests := []struct {
		flag string
		mod  func(c *SetupConfig)
	}{
		{"--issuer", func(c *SetupConfig) { c.Issuer = "" }},
		{"--issuer", func(c *SetupConfig) { c.Issuer = "localhost:8080" }},
		{"--pat-file", func(c *SetupConfig) { c.PAT = "" }},
		{"--out-dir", func(c *SetupConfig) { c.OutDir = "" }},
		{"--out-dir", func(c *SetupConfig) { c.OutDir = filepath.Join(dir, "missing") }},
		{"--users", func(c *SetupConfig) { c.Users = 0 }},
		{"--username", func(c *SetupConfig) { c.Username = "fixed" }},
		{"--redirect-uri", func(c *SetupConfig) { c.RedirectURI = "/cb" }},
		{"--prefix", func(c *SetupConfig) { c.Prefix = "a b" }},
		{"--parallel", func(c *SetupConfig) { c.Parallel = 0 }},
		{"--timeout", func(c *SetupConfig) { c.Timeout = 0 }},
		{"--request-timeout", func(c *SetupConfig) { c.RequestTimeout = 0 }},
	}
	for _, tt := range tests {
		c := ok
		tt.mod(&c)
		err := c.Validate()
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), tt.flag) {
			t.Errorf("%s: error %v, want a usage error naming it", tt.flag, err)
		}
	}
}

func TestGate(t *testing.T) {
	notFound := &APIError{Call: "GetUserByID", Status: http.StatusNotFound, Message: "Errors.User.NotFound"}
	unauth := &APIError{Call: "GetMyUser", Status: http.StatusUnauthorized, Message: "Errors.Token.Invalid"}
	failing := func(err error, okAfter int) (func(context.Context) error, *int) {
		n := new(int)
		return func(context.Context) error {
			if *n++; *n <= okAfter {
				return err
			}
			return nil
		}, n
	}
	lag, lagN := failing(notFound, 3)
	g := Gate{Timeout: time.Second, Interval: time.Millisecond, Checks: []Check{{Name: "lagging", Fn: lag}}}
	if err := g.Wait(context.Background()); err != nil || *lagN != 4 {
		t.Errorf("lagging check: %v after %d attempts, want success on the 4th", err, *lagN)
	}
	deny, denyN := failing(unauth, 3)
	g.Checks = []Check{{Name: "token", Fn: deny}}
	if err := g.Wait(context.Background()); err == nil || *denyN != 1 || !strings.Contains(err.Error(), "readability gate: token: GetMyUser: HTTP 401") {
		t.Errorf("401 without RetryUnauthorized: %v after %d attempts", err, *denyN)
	}
	deny, denyN = failing(unauth, 3)
	g.Checks = []Check{{Name: "token", Fn: deny, RetryUnauthorized: true}}
	if err := g.Wait(context.Background()); err != nil || *denyN != 4 {
		t.Errorf("401 with RetryUnauthorized: %v after %d attempts", err, *denyN)
	}
	never, _ := failing(notFound, 1<<30)
	g = Gate{Timeout: 50 * time.Millisecond, Interval: 5 * time.Millisecond, Checks: []Check{{Name: "first", Fn: func(context.Context) error { return nil }}, {Name: "never", Fn: never}}}
	err := g.Wait(context.Background())
	if err == nil || !strings.Contains(err.Error(), "never not readable within 50ms") || !errors.As(err, new(*APIError)) {
		t.Errorf("deadline: %v", err)
	}
}

func TestLoginNamePattern(t *testing.T) {
	for _, tt := range []struct{ pattern, name, preferred, want string }{
		{"u%d", "u6", "u6", "u%d"},
		{"u%d", "u6", "u6@acme.localhost", "u%d@acme.localhost"},
		{"u%d", "u6", "", "u%d"},
		{"u%d", "u6", "someone-else", "u%d"},
	} {
		if got := loginNamePattern(tt.pattern, tt.name, tt.preferred); got != tt.want {
			t.Errorf("%+v: %q", tt, got)
		}
	}
}

// TestSetupWriteFailure: when a secret file cannot be written, the ones
// already written by the run are removed.
func TestSetupWriteFailure(t *testing.T) {
	f := zitadeltest.NewFake(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileWebSecret), 0o700); err != nil {
		t.Fatal(err)
	}
	err := Setup(context.Background(), setupConfig(f, dir), &lockedBuf{}, &lockedBuf{})
	if err == nil || !strings.Contains(err.Error(), FileWebSecret) {
		t.Fatalf("error %v, want one naming %s", err, FileWebSecret)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != FileWebSecret {
		t.Errorf("left in the out dir: %v, want only the %s directory", ents, FileWebSecret)
	}
}

// TestMalformedAnswers: a 2xx answer without what the caller relies on is
// an error naming the call.
func TestMalformedAnswers(t *testing.T) {
	keyDetails := func(v map[string]string) string {
		b, _ := json.Marshal(v)
		return `{"keyId":"k1","keyDetails":"` + base64.StdEncoding.EncodeToString(b) + `"}`
	}
	tests := []struct {
		name, body, want string
		call             func(c *Client) error
	}{
		{"project without id", `{"details":{}}`, "AddProject: answer has no id",
			func(c *Client) error { _, err := c.AddProject(context.Background(), "p"); return err }},
		{"not JSON", `<html>`, "AddProject (POST /management/v1/projects): HTTP 200 but not the expected JSON",
			func(c *Client) error { _, err := c.AddProject(context.Background(), "p"); return err }},
		{"key not base64", `{"keyId":"k1","keyDetails":"%%%"}`, "AddMachineKey (POST /management/v1/users/u/keys): HTTP 200 but not the expected JSON",
			func(c *Client) error { _, err := c.AddMachineKey(context.Background(), "u"); return err }},
		{"key of the wrong type", keyDetails(map[string]string{"type": "application", "keyId": "k1", "key": "PEM"}), `key file type "application", want "serviceaccount"`,
			func(c *Client) error { _, err := c.AddMachineKey(context.Background(), "u"); return err }},
		{"key without key", keyDetails(map[string]string{"type": "serviceaccount", "keyId": "k1"}), "key file lacks keyId or key",
			func(c *Client) error { _, err := c.AddMachineKey(context.Background(), "u"); return err }},
		{"key id mismatch", keyDetails(map[string]string{"type": "serviceaccount", "keyId": "k2", "key": "PEM"}), `keyId "k2" differs from the answer's id "k1"`,
			func(c *Client) error { _, err := c.AddMachineKey(context.Background(), "u"); return err }},
		{"key details not JSON", `{"keyId":"k1","keyDetails":"` + base64.StdEncoding.EncodeToString([]byte("PEM")) + `"}`, "keyDetails is not a base64 JSON key file",
			func(c *Client) error { _, err := c.AddMachineKey(context.Background(), "u"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tt.body)) }))
			defer srv.Close()
			err := tt.call(New(srv.URL, testPAT, &http.Client{}))
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "PEM") {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
