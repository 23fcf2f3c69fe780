package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products/oidc"
)

// oidcRun runs "provision oidc ARGS..." with stdin.
func oidcRun(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = run(context.Background(), append([]string{"oidc"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeOIDC(t *testing.T, dir, text string) string {
	t.Helper()
	name := filepath.Join(dir, "idp.env")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestOIDCUsageAndConfigErrors: flag misuse is exit 2; a bad file exit 1
// with one line naming FILE:LINE and the key.
func TestOIDCUsageAndConfigErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeOIDC(t, dir, "NAME=oidc:x\nISSUER=http://127.0.0.1:9/\n")
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("NAME=oidc:x\nISSUER=http://127.0.0.1:9/\nSECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no verb", nil, 2, "provision oidc: a verb is required"},
		{"unknown verb", []string{"nosuch", "--config", good}, 2, `provision oidc: unknown verb "nosuch"`},
		{"no config", []string{"env"}, 2, "provision oidc: --config FILE is required"},
		{"scenario missing", []string{"na", "--config", good}, 2, "provision oidc: na wants 1 argument(s)"},
		{"extra argument", []string{"env", "--config", good, "x"}, 2, "provision oidc: env wants 0 argument(s)"},
		{"tokens without flags", []string{"tokens", "--config", good}, 2, "provision oidc: tokens needs --kind"},
		{"discover without state", []string{"discover", "--config", good}, 2, "provision oidc: discover needs --state DIR"},
		{"missing file", []string{"env", "--config", filepath.Join(dir, "no.env")}, 2,
			"provision oidc: no readable configuration file " + filepath.Join(dir, "no.env") + " (IDPBENCH_OIDC_CONFIG)\n"},
		{"unknown key", []string{"env", "--config", bad}, 2, "provision oidc: " + bad + ":3: unknown key SECRET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := oidcRun(t, "", tt.args...)
			if code != tt.code || !strings.HasPrefix(stderr, tt.stderr) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, stderr %q", code, stdout, stderr, tt.code, tt.stderr)
			}
			if strings.Contains(tt.name, "file") || strings.Contains(tt.name, "key") {
				if strings.Count(stderr, "\n") != 1 {
					t.Errorf("a bad file: want one line, got %q", stderr)
				}
			}
		})
	}
}

// TestOIDCVerbs: the adapter's questions, against a state directory's
// discovery document fetched by discover from a stand-in IdP.
func TestOIDCVerbs(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"issuer":"` + srv.URL + `/other","token_endpoint":"` + srv.URL + `/token","grant_types_supported":["client_credentials"]}`))
	}))
	defer srv.Close()
	dir, state := t.TempDir(), t.TempDir()
	cfg := writeOIDC(t, dir, "NAME=oidc:x\nISSUER="+srv.URL+"/\nCLIENT_ID=c\nCLIENT_SECRET_FILE=c.secret\n"+
		"USER_TOKENS=command\nTOKEN_COMMAND=./tokens.sh\nMATCH=idp serve\nNOTE=n\n")
	if err := os.WriteFile(filepath.Join(dir, "c.secret"), []byte("s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cf := []string{"--config", cfg, "--state", state}

	if code, stdout, _ := oidcRun(t, "", append([]string{"na"}, append(cf, "client_credentials")...)...); code != 0 ||
		!strings.HasPrefix(stdout, "no discovery document read (is the IdP up? "+srv.URL+"/.well-known/openid-configuration)") {
		t.Errorf("na before discover: %d %q", code, stdout)
	}
	code, stdout, stderr := oidcRun(t, "", append([]string{"discover"}, cf...)...)
	if code != 0 || stdout != "" || !strings.Contains(stderr, `warning: discovery says issuer "`+srv.URL+`/other"`) {
		t.Fatalf("discover: %d %q %q", code, stdout, stderr)
	}
	for _, tt := range []struct {
		verb, scenario, want string
	}{
		{"na", "client_credentials", ""},
		{"na", "refresh", `discovery grant_types_supported is ["client_credentials"]: no "refresh_token"` + "\n"},
		{"endpoint", "client_credentials", srv.URL + "/token\n"},
		{"loadargs", "userinfo", "--product\noidc:x\n--pool-mode\nreuse\n"},
		{"pool", "refresh", "refresh_token\nchain\ncommand\n"},
		{"pool", "client_credentials", "access_token\nreuse\nclient_credentials\n--flow\nclient_credentials\n--token-url\n" + srv.URL + "/token\n" +
			"--client-id\nc\n--client-secret-file\n" + filepath.Join(dir, "c.secret") + "\n--client-auth\nbasic\n-P\n8\n--emit\naccess_token\n--product\noidc:x\n"},
	} {
		code, stdout, stderr := oidcRun(t, "", append([]string{tt.verb}, append(cf, tt.scenario)...)...)
		if code != 0 || stdout != tt.want || strings.Contains(stdout, "s3cr3t") {
			t.Errorf("%s %s: %d %q (%s); want %q", tt.verb, tt.scenario, code, stdout, stderr, tt.want)
		}
	}
	// What the ladder and the sampler read in-process: the entry's answers
	// from the file up recorded and the same discovery document.
	entry := oidc.Product()
	if err := os.WriteFile(filepath.Join(state, "state.env"), []byte("ISSUER="+srv.URL+"/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := entry.Answer(state, "client_credentials"); err == nil || !strings.Contains(err.Error(), "OIDC_CONFIG is not recorded") {
		t.Errorf("Answer before up recorded the file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(state, "state.env"), []byte("OIDC_CONFIG="+cfg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := entry.Answer(state, "client_credentials"); err != nil || a.Endpoint != srv.URL+"/token" || a.TTL != 0 || len(a.Metrics) != 0 || a.Process != "oidc:x" ||
		!slices.Equal(a.Load, []string{"--product", "oidc:x", "--client-id", "c", "--client-secret-file", filepath.Join(dir, "c.secret"), "--client-auth", "basic"}) {
		t.Errorf("Answer client_credentials: %+v, %v", a, err)
	}
	if _, err := entry.Answer(state, "refresh"); !errors.Is(err, product.ErrNA) || !strings.HasSuffix(err.Error(), `no "refresh_token"`) {
		t.Errorf("Answer refresh: %v; want N/A with na's reason", err)
	}
	if args, warning, err := entry.SampleArgs(state); err != nil || warning != "" || !slices.Equal(args, []string{"--match", "idp serve", "--name", "oidc:x"}) {
		t.Errorf("SampleArgs: %q %q %v", args, warning, err)
	}
	// The meta's arguments: the part's, then each scenario's N/A reason or
	// endpoint by the discovery document, which provision meta takes as
	// they are.
	name, metaArgs, err := entry.MetaArgs(state)
	stdout = strings.Join(metaArgs, "\n") + "\n"
	if err != nil || name != "oidc:x" || !strings.HasPrefix(stdout, "--entry\noidc\n--param\nconfig_file="+cfg+"\n") ||
		!strings.Contains(stdout, "--note\nn\n--endpoint\ndiscovery="+srv.URL+"/.well-known/openid-configuration\n--endpoint\nclient_credentials="+srv.URL+"/token\n") ||
		!strings.HasSuffix(stdout, "--scenario-na\nuserinfo=the discovery document ("+srv.URL+"/.well-known/openid-configuration) has no userinfo_endpoint, and USERINFO_ENDPOINT is not set\n") {
		t.Errorf("MetaArgs: %q, %v, %q; want the configuration's NAME oidc:x", name, err, stdout)
	}
	args := append([]string{"meta", "--product", name, "--product-version", "1", "--state", state}, metaArgs...)
	code, out, stderr := runArgs(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("provision meta on oidc meta's arguments: exit %d: %s", code, stderr)
	}
	m := decode(t, out)
	if want := map[string]string{"discovery": srv.URL + "/.well-known/openid-configuration", "client_credentials": srv.URL + "/token"}; !reflect.DeepEqual(m.Endpoints, want) ||
		len(m.ScenarioNA) != 6 || m.ScenarioNA["refresh"] != `discovery grant_types_supported is ["client_credentials"]: no "refresh_token"` {
		t.Errorf("endpoints %v, scenario_na %v", m.Endpoints, m.ScenarioNA)
	}
	if code, stdout, _ := oidcRun(t, "", "env", "--config", cfg); code != 0 || !strings.Contains(stdout, "\nCLIENT_SECRET_FILE="+filepath.Join(dir, "c.secret")+"\n") ||
		strings.Contains(stdout, "s3cr3t") {
		t.Errorf("env: %d %q", code, stdout)
	}
}

func TestOIDCDiscoverFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/array/.well-known/openid-configuration":
			w.Write([]byte(`["not", "an", "object"]`))
		case "/moved/.well-known/openid-configuration":
			http.Redirect(w, r, "/array/.well-known/openid-configuration", http.StatusFound)
		default:
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/array/": "not a JSON object",
		"/moved/": "request failed: HTTP status 302",
		"/down/":  "request failed: HTTP status 503",
	} {
		dir, state := t.TempDir(), t.TempDir()
		cfg := writeOIDC(t, dir, "NAME=oidc:x\nISSUER="+srv.URL+path+"\n")
		code, _, stderr := oidcRun(t, "", "discover", "--config", cfg, "--state", state)
		if code != 1 || !strings.HasPrefix(stderr, "provision oidc: discovery document "+srv.URL+path+".well-known/openid-configuration: "+want) {
			t.Errorf("%s: exit %d, %q", path, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(state, "discovery.json")); !os.IsNotExist(err) {
			t.Errorf("%s: a discovery.json was left: %v", path, err)
		}
	}
}

// TestOIDCTokens: TOKEN_COMMAND's output becomes a pool (0600, header,
// tokens only); fewer than asked is a warning, a bad line an error that
// leaves no file.
func TestOIDCTokens(t *testing.T) {
	dir := t.TempDir()
	cfg := writeOIDC(t, dir, "NAME=oidc:x\nISSUER=http://127.0.0.1:9/\n")
	out := filepath.Join(dir, "rt.pool")
	code, stdout, stderr := oidcRun(t, "# from the command\nt1\n\nt2\n", "tokens", "--config", cfg, "--kind", "refresh_token", "--count", "3", "-o", out)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "warning: TOKEN_COMMAND printed 2 tokens, 3 were asked for") {
		t.Fatalf("tokens: %d %q %q", code, stdout, stderr)
	}
	p, err := pool.ReadFile(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(out)
	if strings.Join(p.Creds, ",") != "t1,t2" || p.Header["kind"] != "refresh_token" || p.Header["product"] != "oidc:x" ||
		p.Header["flow"] != "command" || p.Header["minted"] == "" || st.Mode().Perm() != pool.Mode {
		t.Errorf("pool %+v, mode %v", p, st.Mode())
	}
	bad := filepath.Join(dir, "bad.pool")
	code, _, stderr = oidcRun(t, "t1\nnot one\n", "tokens", "--config", cfg, "--kind", "access_token", "--count", "1", "-o", bad)
	if code != 1 || !strings.Contains(stderr, "whitespace inside") {
		t.Errorf("bad tokens: %d %q", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a pool was written from bad output: %v", err)
	}
}

// TestOIDCCheck: the preflight reports every problem of a file at once,
// each at its line (exit 2, nothing on stdout); on a good file it fetches
// the discovery document and prints the plan (exit 0); an IdP that does not
// answer is exit 1 unless START_COMMAND is to start it.
func TestOIDCCheck(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"issuer":"` + srv.URL + `/","token_endpoint":"` + srv.URL + `/token","authorization_endpoint":"` + srv.URL + `/auth",` +
			`"userinfo_endpoint":"` + srv.URL + `/userinfo","grant_types_supported":["client_credentials","authorization_code","refresh_token"]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"svc.secret": 0o600, "open.secret": 0o644, "users.pw": 0o600} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("s3cr3t\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	bad := write("bad.env", "# a copy gone wrong\nNAME=my idp\nISSUER=https://idp.example.com/\nCLIENT_ID=svc\n"+
		"CLIENT_SECRET_FILE=open.secret\nCLIENT_AUTH=jwt\nSECRET_FILE=x\nUSER_TOKENS=password\nPASSWORD_FILE=nosuch.pw\n"+
		"USER_CLIENT_SECRET_FILE=svc.secret\n")
	code, stdout, stderr := oidcRun(t, "", "check", "--config", bad)
	want := []string{
		bad + ":2: NAME=my idp: only letters, digits and . _ : - (no spaces)",
		bad + ":3: ISSUER=https://idp.example.com/: idp.example.com is not on loopback (127.0.0.0/8, [::1] or localhost): every IdP is measured on this machine",
		bad + ":5: CLIENT_SECRET_FILE: " + filepath.Join(dir, "open.secret") + " is mode 0644, open to group or others: a credential file is 0600",
		bad + ":6: CLIENT_AUTH=jwt: want one of basic post",
		bad + ":7: unknown key SECRET_FILE",
		bad + ":9: PASSWORD_FILE: no such file " + filepath.Join(dir, "nosuch.pw"),
		"provision oidc: check: 6 problem(s) in " + bad + " (each above, at its line); the first: " + bad + ":2: NAME=my idp",
	}
	got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 2 || stdout != "" || len(got) != len(want) {
		t.Fatalf("check of a bad file: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %d lines", code, stdout, stderr, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q\nwant %q...", i+1, got[i], want[i])
		}
	}

	good := write("good.env", "NAME=oidc:mine\nISSUER="+srv.URL+"/\nCLIENT_ID=svc\nCLIENT_SECRET_FILE=svc.secret\n"+
		"USER_TOKENS=password\nPASSWORD_FILE=users.pw\nUSERS=3\nLOGIN=form\nREDIRECT_URI=http://127.0.0.1/cb\n")
	code, stdout, stderr = oidcRun(t, "", "check", "--config", good)
	if code != 0 || stderr != "" || strings.Contains(stdout, "s3cr3t") {
		t.Fatalf("check of a good file: exit %d, stderr %q", code, stderr)
	}
	for _, l := range []string{
		"plan for oidc:mine (" + good + "), discovery document " + srv.URL + "/.well-known/openid-configuration:\n",
		"  S1   discovery                 run   GET " + srv.URL + "/.well-known/openid-configuration\n",
		"  S2   client_credentials        run   POST " + srv.URL + "/token, grant client_credentials, client svc (basic)\n",
		"  S2l  client_credentials_login  N/A   CLIENT_USERINFO is not yes in good.env",
		"  S2j  jwt_bearer                N/A   no JWT_BEARER_KEY_FILE in good.env",
		"  S3   introspect                N/A   the discovery document (" + srv.URL + "/.well-known/openid-configuration) has no introspection_endpoint",
		"  S4   auth_code                 run   login form at " + srv.URL + "/auth: user%d over 3 users",
		"  S6   userinfo                  run   GET " + srv.URL + "/userinfo; access tokens: password grant: user%d over 3 users",
	} {
		if !strings.Contains(stdout, l) {
			t.Errorf("plan lacks %q:\n%s", l, stdout)
		}
	}

	// Nothing answers there: a runtime problem, exit 1, at the line of the
	// key it comes from (the issuer's default discovery URL: the file).
	down := write("down.env", "NAME=oidc:down\nISSUER=http://127.0.0.1:1/\n")
	code, stdout, stderr = oidcRun(t, "", "check", "--config", down)
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, down+": discovery document http://127.0.0.1:1/.well-known/openid-configuration: no answer:") ||
		!strings.Contains(stderr, "provision oidc: check: 1 problem(s) in "+down) {
		t.Errorf("check with no IdP: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// START_COMMAND starts the IdP: not fetched; the plan says so.
	started := write("started.env", "NAME=oidc:s\nISSUER=http://127.0.0.1:1/\nSTART_COMMAND=exec my-idp\n")
	code, stdout, stderr = oidcRun(t, "", "check", "--config", started)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "discovery document not read: START_COMMAND starts the IdP") ||
		!strings.Contains(stdout, "  S1   discovery                 run   GET http://127.0.0.1:1/.well-known/openid-configuration\n") {
		t.Errorf("check with START_COMMAND: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if code, _, stderr := oidcRun(t, "", "check", "--config", good, "x"); code != 2 || !strings.Contains(stderr, "check wants --config FILE and no argument") {
		t.Errorf("check with an argument: exit %d, %q", code, stderr)
	}
}
