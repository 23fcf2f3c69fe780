package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/meta/*.json from provision meta's output")

// testState writes a state directory with two pools, a readback record
// and a listeners record, the inputs of testdata/meta/*.json.
func testState(t *testing.T, product string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pools.jsonl"),
		`{"scenario":"refresh","kind":"refresh_token","mode":"chain","size":16,"flow":"admin-accept"}`+"\n"+
			`{"scenario":"userinfo","kind":"access_token","mode":"reuse","size":256,"flow":"password"}`+"\n")
	write(t, filepath.Join(dir, "facts.json"), `{"schema":"idpbench.facts/v1","product":"`+product+
		`","version":"v","read":"2026-12-02T13:00:00Z","facts":[{"name":"a","value":"b","source":"read","from":"x"}]}`)
	write(t, filepath.Join(dir, "listeners.json"), `{"schema":"idpbench.facts/v1","product":"`+product+
		`","version":"v","read":"2026-12-02T13:00:00Z","facts":[{"name":"listeners","value":"127.0.0.1:1","source":"read","from":"/proc"}]}`)
	return dir
}

func write(t *testing.T, name, s string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

var keycloakParams = []string{"--param", "jdk=OpenJDK 21.0.9", "--param", "heap=-Xms1g -Xmx1400m",
	"--param", "build=--db=postgres --health-enabled=true --metrics-enabled=true", "--param", "base_url=http://127.0.0.1:8080",
	"--param", "users=20"}

// TestAdapterMetaGolden: the adapter's record for each product and mode is
// testdata/meta/PRODUCT-MODE.json, which the jq of the shell adapters
// produced from the same state before the products became Go data (zitadel's
// with its note naming provision zitadel, and without the empty scenario_na
// that omitempty leaves out). The endpoints are the golden's own (passed
// through: they replace the table's); the product's part, N/A reasons,
// pools, facts and compose mode's additions are built, compose mode from a
// state.env that says MODE=compose and names the product's compose file,
// its entry's ComposeFile (whose memory limits the golden records).
func TestAdapterMetaGolden(t *testing.T) {
	tests := []struct {
		product, version, mode string
		args                   []string
	}{
		{"hydra", "v2.3.0", "native", nil},
		{"hydra", "v2.3.0", "compose", nil},
		{"keycloak", "26.7.3", "native", keycloakParams},
		{"keycloak", "26.7.3", "compose", keycloakParams},
		{"refop", "v3.52.0", "native", nil},
		{"zitadel", "v4.19.4", "native", nil},
		{"zitadel", "v4.19.4", "compose", nil},
	}
	for _, tt := range tests {
		t.Run(tt.product+"-"+tt.mode, func(t *testing.T) {
			golden := filepath.Join("testdata", "meta", tt.product+"-"+tt.mode+".json")
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			var g schema.Meta
			if err := json.Unmarshal(want, &g); err != nil {
				t.Fatal(err)
			}
			if g.ProductVersion != tt.version {
				t.Fatalf("%s is of version %s, the test gives %s", golden, g.ProductVersion, tt.version)
			}
			st := testState(t, tt.product)
			if tt.mode == "compose" {
				file, err := filepath.Abs(filepath.Join("..", "..", "products", tt.product, "compose.yml"))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(st, "state.env"), "MODE=compose\nCOMPOSE_FILE="+file+"\n")
			}
			args := []string{"meta", "--product", tt.product, "--product-version", tt.version, "--state", st}
			for s, u := range g.Endpoints {
				args = append(args, "--endpoint", s+"="+u)
			}
			code, stdout, stderr := runArgs(t, context.Background(), append(args, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if *update {
				write(t, golden, stdout)
				return
			}
			if !sameJSON(t, want, []byte(stdout)) {
				t.Errorf("the record differs from %s:\n%s", golden, stdout)
			}
			if _, err := schema.DecodeMeta(strings.NewReader(stdout), "stdout"); err != nil {
				t.Error(err)
			}
		})
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

func decode(t *testing.T, s string) schema.Meta {
	t.Helper()
	m, err := schema.DecodeMeta(strings.NewReader(s), "stdout")
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return *m
}

// TestAdapterMetaInputs: what the shell passes lands in the record: the
// adapter's N/A reason over the product's, the facts in order (readback, then listeners), the Keycloak values in its settings
// and deviations; the generic adapter's configuration entries, under its
// product's own name.
func TestAdapterMetaInputs(t *testing.T) {
	st := testState(t, "keycloak")
	args := append([]string{"meta", "--product", "keycloak", "--product-version", "26.7.3", "--state", st,
		"--scenario-na", "jwt_bearer=not here", "--scenario-na", "refresh=no refresh today", "--endpoint", "discovery=http://x/d"}, keycloakParams...)
	code, stdout, stderr := runArgs(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := decode(t, stdout)
	if m.Status != "ok" || m.ScenarioNA["jwt_bearer"] != "not here" || m.ScenarioNA["refresh"] != "no refresh today" || len(m.ScenarioNA) != 2 {
		t.Errorf("status %q, scenario_na %v", m.Status, m.ScenarioNA)
	}
	if m.Database != nil || !reflect.DeepEqual(m.Endpoints, map[string]string{"discovery": "http://x/d"}) {
		t.Errorf("database %v, endpoints %v", m.Database, m.Endpoints)
	}
	if len(m.Facts) != 2 || m.Facts[0].Name != "a" || m.Facts[1].Name != "listeners" || len(m.Pools) != 2 || m.Pools[1].Size != 256 {
		t.Errorf("facts %+v, pools %+v", m.Facts, m.Pools)
	}
	if m.Settings["heap"] != "JAVA_OPTS_KC_HEAP=-Xms1g -Xmx1400m" || m.Settings["jdk"] != "OpenJDK 21.0.9" || m.Settings["version"] != "26.7.3" ||
		m.Deviations[2].What != "JAVA_OPTS_KC_HEAP=-Xms1g -Xmx1400m" || m.Deviations[5].What != "--db-pool-initial-size=min-size=max-size=25" {
		t.Errorf("settings %v, deviations %+v", m.Settings, m.Deviations)
	}

	args = []string{"meta", "--product", "oidc:myidp", "--product-version", "1", "--state", t.TempDir(), "--entry", "oidc",
		"--scenario-na", "auth_code=no login page", "--note", "n1", "--note", "n2", "--deviation", "w | y | z",
		"--config-source", "docs | https://example.com/a", "--setting", "workers=4", "--setting", "client_auth=post", "--setting", "workers=8"}
	for _, p := range []string{"config_file=my.env", "issuer=http://i", "discovery=http://i/d", "client_auth=basic", "user_tokens=none",
		"s5_pool_mode=chain", "s3_tokens=client_credentials", "s3_client_auth=", "start_command=", "token_endpoint=http://i/t",
		"introspection_endpoint=", "userinfo_endpoint=", "grant_types=", "authorization_endpoint=", "login=none",
		"client_userinfo=no", "jwt_bearer=none"} {
		args = append(args, "--param", p)
	}
	code, stdout, stderr = runArgs(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("--entry oidc: exit %d: %s", code, stderr)
	}
	m = decode(t, stdout)
	wantDev := []schema.Note{{What: "w", Why: "y | z"}, {What: "token endpoint overridden: http://i/t", Why: "set in the configuration file, not taken from the discovery document"}}
	if m.Product != "oidc:myidp" || m.ProductVersion != "1" || m.Settings["workers"] != "8" || m.Settings["client_auth"] != "post" ||
		m.Settings["s3_client_auth"] != "the introspecting client's own" || m.Settings["cold_start"] != "N/A: no START_COMMAND; the IdP was already running" ||
		!reflect.DeepEqual(m.Deviations, wantDev) || len(m.Notes) != 4 || m.Notes[1] != "n2" || m.ConfigSources[0].URL != "https://example.com/a" ||
		m.ScenarioNA["auth_code"] != "no login page" || len(m.ScenarioNA) != 1 || m.Pools != nil || m.Facts != nil {
		t.Errorf("--entry oidc record %+v", m)
	}
}

// TestNAMeta: the bare record of a product that did not run, byte for
// byte: the five fields the report reads, nothing else.
func TestNAMeta(t *testing.T) {
	code, stdout, stderr := runArgs(t, context.Background(), "meta", "--product", "nosuch", "--status", "na",
		"--na-reason", "no adapter products/nosuch/adapter in this tree yet")
	want := `{
  "schema": "idpbench.meta/v1",
  "product": "nosuch",
  "product_version": "",
  "status": "na",
  "na_reason": "no adapter products/nosuch/adapter in this tree yet"
}
`
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, stderr, stdout, want)
	}
}

var placementArgs = []string{"--placement-mode", "shared", "--driver-cpus", "0-1", "--server-cpus", "0-1", "--host-cpus", "2",
	"--placement-reason", "2 CPUs: fewer than 4, driver and server share them"}

// TestRunPart: run-comparison.sh's part over an adapter's record and over
// a bare one.
func TestRunPart(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "adapter.json")
	code, _, stderr := runArgs(t, context.Background(), "meta", "--product", "refop", "--product-version", "v3.52.0",
		"--state", testState(t, "refop"), "-o", base)
	if code != 0 {
		t.Fatalf("adapter record: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "meta.json")
	args := append([]string{"meta", "--base", base, "--status", "na", "--na-reason", "failed in the introspect ladder (exit 1)",
		"--profile", "quick", "--start", "2026-12-02T13:02:10Z", "--end", "2026-12-02T13:06:24Z",
		"--scenarios", "discovery client_credentials jwt_bearer introspect", "--rounds", "3", "--round-order", "interleaved-random", "--round-seed", "7", "-o", out}, placementArgs...)
	if code, stdout, stderr := runArgs(t, context.Background(), args...); code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, string(b))
	if m.Status != "na" || m.NAReason != "failed in the introspect ladder (exit 1)" ||
		m.Start.Format("15:04:05") != "13:02:10" || m.End.Format("15:04:05") != "13:06:24" {
		t.Errorf("status %q %q, start %v, end %v", m.Status, m.NAReason, m.Start, m.End)
	}
	// The adapter's reason for S2l wins over "not in this run's list".
	wantNA := map[string]string{
		"client_credentials_login": "the reference OP answers userinfo with 403 to a client's (service user's) access token: S2l's rule wants a 2xx with a sub",
		"auth_code":                "not in this run's scenario list (IDPBENCH_SCENARIOS)",
		"refresh":                  "not in this run's scenario list (IDPBENCH_SCENARIOS)",
		"userinfo":                 "not in this run's scenario list (IDPBENCH_SCENARIOS)",
	}
	if !reflect.DeepEqual(m.ScenarioNA, wantNA) {
		t.Errorf("scenario_na %v", m.ScenarioNA)
	}
	wantPl := schema.Placement{Mode: "shared", DriverCPUs: "0-1", ServerCPUs: "0-1", HostCPUs: 2, Reason: "2 CPUs: fewer than 4, driver and server share them"}
	if m.Placement == nil || *m.Placement != wantPl || m.Notes[len(m.Notes)-1] != "profile: quick" || len(m.Notes) != 6 || len(m.Pools) != 2 {
		t.Errorf("placement %+v, notes %q, pools %d", m.Placement, m.Notes, len(m.Pools))
	}
	if m.Rounds == nil || *m.Rounds != (schema.Rounds{Count: 3, Order: schema.RoundsRandom, Seed: 7}) {
		t.Errorf("rounds %+v, want 3 interleaved-random, seed 7", m.Rounds)
	}

	// A bare record completed by the run's part, no start: not recorded.
	args = append([]string{"meta", "--product", "hydra", "--product-version", "v2.3.0", "--status", "na", "--na-reason", "the run of hydra stopped unexpectedly (exit 1)",
		"--profile", "full"}, placementArgs...)
	code, stdout, stderr := runArgs(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("bare + run: exit %d: %s", code, stderr)
	}
	m = decode(t, stdout)
	if !m.Start.IsZero() || m.End.IsZero() || strings.Contains(stdout, `"start"`) || m.ScenarioNA != nil || m.Rounds != nil ||
		!reflect.DeepEqual(m.Notes, []string{"profile: full"}) || m.Settings != nil || m.Status != "na" {
		t.Errorf("bare + run record:\n%s", stdout)
	}
}

// TestMetaBadInput: each bad input exits 2 naming the flag or the file
// (and line), writes nothing to stdout and leaves no output file.
func TestMetaBadInput(t *testing.T) {
	st := testState(t, "keycloak")
	badPools := t.TempDir()
	write(t, filepath.Join(badPools, "pools.jsonl"), `{"scenario":"refresh","size":1}`+"\n"+`{"scenario":`+"\n")
	badFacts := t.TempDir()
	write(t, filepath.Join(badFacts, "facts.json"), `{"schema":"idpbench.step/v1","facts":[]}`)
	base := filepath.Join(t.TempDir(), "base.json")
	write(t, base, `{"schema":"idpbench.meta/v2","product":"x"}`)
	hydra := []string{"meta", "--product", "hydra", "--product-version", "v2.3.0", "--state", st}
	run := append([]string{"--status", "ok", "--profile", "quick"}, placementArgs...)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"keycloak without its params", []string{"meta", "--product", "keycloak", "--product-version", "26.7.3", "--state", st}, "--param jdk=VALUE"},
		{"a param hydra does not take", append(hydra, "--param", "heap=1g"), "takes no --param heap"},
		{"param without =", append(hydra, "--param", "heap"), `--param "heap": want KEY=VALUE`},
		{"unknown product", []string{"meta", "--product", "nosuch", "--product-version", "1", "--state", st}, `--product "nosuch"`},
		{"unknown entry", []string{"meta", "--product", "oidc:x", "--product-version", "1", "--state", st, "--entry", "generic"}, `--entry "generic"`},
		{"config entries for keycloak", append(append([]string{"meta", "--product", "keycloak", "--product-version", "1", "--state", st}, keycloakParams...), "--note", "n"), "keycloak takes no --note"},
		{"deviation without why", append(hydra, "--deviation", "serve all --dev"), `--deviation "serve all --dev": want 'WHAT | WHY'`},
		{"no product", []string{"meta", "--status", "na", "--na-reason", "x"}, "--product"},
		{"endpoint of an unknown scenario", append(hydra, "--endpoint", "login=http://x"), `unknown scenario "login"`},
		{"endpoint of an N/A scenario", append(hydra, "--endpoint", "jwt_bearer=http://x"), "jwt_bearer has an endpoint and is N/A"},
		{"twice", append(hydra, "--endpoint", "discovery=a", "--endpoint", "discovery=b"), "--endpoint: discovery given twice"},
		{"pools line", []string{"meta", "--product", "hydra", "--product-version", "v", "--state", badPools}, filepath.Join(badPools, "pools.jsonl") + ":2"},
		{"facts of another kind", []string{"meta", "--product", "hydra", "--product-version", "v", "--state", badFacts}, filepath.Join(badFacts, "facts.json")},
		{"base of another major", append([]string{"meta", "--base", base}, run...), "--base"},
		{"base and product", append([]string{"meta", "--base", base, "--product", "x"}, run...), "--base gives the product"},
		{"bare record without na", []string{"meta", "--product", "x"}, "--status na --na-reason"},
		{"na without reason", []string{"meta", "--product", "x", "--status", "na"}, "--status na needs --na-reason"},
		{"reason with ok", append(hydra, "--status", "ok", "--na-reason", "x", "--profile", "quick"), "--na-reason goes with --status na"},
		{"bad status", []string{"meta", "--product", "x", "--status", "maybe"}, `--status "maybe"`},
		{"status on an adapter's record", append(hydra, "--status", "ok"), "--status goes with --profile"},
		{"run flag without profile", append(hydra, "--start", "2026-12-02T13:02:10Z"), "--start is of the run's part"},
		{"adapter flag with base", append([]string{"meta", "--base", base, "--param", "a=b"}, run...), "--param builds the adapter's part"},
		{"bad start", append(append(hydra, run...), "--start", "yesterday"), "--start"},
		{"bad placement", append(hydra, "--status", "ok", "--profile", "quick", "--placement-mode", "split"), `--placement-mode "split"`},
		{"no cpus", append(hydra, "--status", "ok", "--profile", "quick", "--placement-mode", "shared"), "--driver-cpus, --server-cpus and --host-cpus"},
		{"rounds without their order", append(append(hydra, run...), "--rounds", "3"), `--round-order "": with --rounds 3 want interleaved`},
		{"rounds of another order", append(append(hydra, run...), "--rounds", "2", "--round-order", "consecutive"), `--round-order "consecutive"`},
		{"order without rounds", append(append(hydra, run...), "--round-order", "interleaved"), "want --rounds >= 1"},
		{"seed of a fixed order", append(append(hydra, run...), "--rounds", "2", "--round-order", "interleaved", "--round-seed", "7"), "--round-seed 7: only with --round-order interleaved-random"},
		{"negative rounds", append(append(hydra, run...), "--rounds", "-1"), "want --rounds >= 1"},
		{"rounds without profile", append(hydra, "--rounds", "3"), "--rounds is of the run's part"},
		{"unknown run scenario", append(append(hydra, run...), "--scenarios", "discovery,login"), `--scenarios: unknown scenario "login"`},
		{"positional", append(hydra, "extra"), `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "meta.json")
			code, stdout, stderr := runArgs(t, context.Background(), append(tt.args, "-o", out)...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "provision meta: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and an error with %q", code, stdout, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written", out)
			}
		})
	}
}

// TestMetaSecretFree: the record holds what it is given and nothing from
// the environment (a secret in the environment never reaches it).
func TestMetaSecretFree(t *testing.T) {
	t.Setenv("IDPBENCH_CLIENT_SECRET", "s3cret-value")
	code, stdout, _ := runArgs(t, context.Background(), append([]string{"meta", "--product", "keycloak", "--product-version", "26.7.3",
		"--state", testState(t, "keycloak")}, keycloakParams...)...)
	if code != 0 || bytes.Contains([]byte(stdout), []byte("s3cret")) {
		t.Errorf("exit %d or the secret is in the record", code)
	}
}

func TestNA(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"na", "hydra", "jwt_bearer"}, 0, "Hydra's jwt-bearer grant needs a trust relationship per issuer; not provisioned (S2j is Zitadel's M2M path)\n"},
		{[]string{"na", "keycloak", "jwt_bearer"}, 0, "Keycloak has no RFC 7523 JWT authorization grant in its default configuration (S2j is Zitadel's M2M path)\n"},
		{[]string{"na", "hydra", "discovery"}, 0, ""},
		{[]string{"na", "zitadel", "jwt_bearer"}, 0, ""},
		{[]string{"na", "nosuch", "discovery"}, 2, ""},
		{[]string{"na", "hydra", "login"}, 2, ""},
		{[]string{"na", "hydra"}, 2, ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(t, context.Background(), tt.args...)
		if code != tt.code || stdout != tt.stdout || (code == 2) != strings.HasPrefix(stderr, "provision na: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
	}
}
