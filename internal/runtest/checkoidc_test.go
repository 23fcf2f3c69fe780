package runtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// oidcCases are TestCheckOIDC's cases, in the order they run: a product
// its own adapter starts, or refop-start, where the generic adapter starts
// the reference OP itself.
var oidcCases = []string{"hydra", "keycloak", "refop", "refop-start"}

// oidcRuns are the scenarios each case measures (the rest are N/A), and
// its S4's requests.
var oidcRuns = map[string]struct {
	ids   []string
	na    map[string]string // scenario: what its N/A reason starts with
	login []string
}{
	"hydra": {[]string{"S1", "S2", "S3", "S4", "S5", "S6"},
		map[string]string{"client_credentials_login": "CLIENT_USERINFO is not yes", "jwt_bearer": "no JWT_BEARER_KEY_FILE"},
		[]string{"login_authorize", "login_accept", "login_verifier", "login_consent", "login_callback", "oidc_token"}},
	"keycloak": {[]string{"S1", "S2", "S2l", "S3", "S4", "S5", "S6"},
		map[string]string{"jwt_bearer": "no JWT_BEARER_KEY_FILE"},
		[]string{"login_authorize", "login_submit", "login_consent_page", "login_consent", "login_resume", "oidc_token"}},
	"refop": {[]string{"S1", "S2", "S2j", "S3", "S4", "S5", "S6"},
		map[string]string{"client_credentials_login": "CLIENT_USERINFO is not yes"},
		[]string{"login_authorize", "login_form", "login_submit", "login_callback", "login_consent_page", "login_consent", "login_resume", "oidc_token"}},
}

// TestCheckOIDC proves the generic adapter (products/oidc/adapter) is
// generic: it measures Hydra, Keycloak and the reference OP, each started by
// its own adapter, knowing only what a configuration file tells it. A
// subtest per case, in series (go test -run 'TestCheckOIDC/keycloak' runs
// one):
//
//  1. the product's own adapter: install (cached), up and setup into a
//     scratch state directory (skipped for refop-start)
//  2. a configuration for the oidc adapter, copied from the template
//     (examples/oidc/myidp.env) as a user would: the template, then the
//     shipped example's values (examples/oidc/<product>.env), then those of
//     that state -- issuer, ports, secret, password and key files (0600),
//     the sampler's process and database (a later line wins). refop uses
//     TOKEN_COMMAND for its user tokens (mintpool), so that path runs too.
//     refop-start uses examples/oidc/refop.env on a free port: the oidc
//     adapter starts the reference OP itself (START_COMMAND, cold start)
//  3. provision oidc check: exit 0, every scenario of the case planned to
//     run, the others N/A
//  4. scripts/run-comparison.sh --quick --fresh --only oidc with
//     IDPBENCH_OIDC_CONFIG pointing at it (its own run id oidc-<case>)
//  5. keycloak: consent required of its client (admin API), then a short
//     paced S4 step with the generic adapter's own loadstep arguments:
//     every iteration ok, Keycloak's consent page answered
//  6. the product's own adapter: down, which fails naming anything left
//  7. assertions: `aggregate steady` has every scenario of the case (S1 S2
//     S3 S4 S5 S6 everywhere, S2l on Keycloak, S2j on the reference OP) for
//     the configured product name with numbers and zero failed requests at
//     the steady step, S4 through the case's login protocol (its
//     request_order); the others N/A in meta.json with the file's reason;
//     meta.json names that product; the sampler recorded its process tree;
//     refop-start has complete cold starts A and B and its port is free again
//
// First, a configuration whose IdP does not answer stops the run at its
// preflight, before any load. Then one aggregate report over every case run
// (COMPARISON.md) must hold a row per case.
//
// Environment: IDPBENCH_GCJITTER_S (default here 15 s), IDPBENCH_LADDER
// (default here "8": one level a scenario, not the quick profile's 2 8 32),
// IDPBENCH_KEYCLOAK_USERS (20). Several minutes: Keycloak's case is the
// longest.
func TestCheckOIDC(t *testing.T) {
	h := newHarness(t, "check-oidc", "jq", "curl", "python3", "go")
	// Products start their own PostgreSQL (the caller's shared one is not ours to use).
	h.env = environ(h.env, "IDPBENCH_TMP="+h.work, "IDPBENCH_PG_DIR")
	if !t.Run("preflight", func(t *testing.T) { checkOIDCPreflight(h.in(t)) }) {
		return
	}
	var names []string // the configured product names of the cases run
	for _, c := range oidcCases {
		var name string
		if !t.Run(c, func(t *testing.T) { name = checkOIDCCase(h.in(t), c) }) {
			return // in series: the first failed case ends the check
		}
		if name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no case ran (want one of %s)", strings.Join(oidcCases, " "))
	}
	runs, _ := filepath.Glob(filepath.Join(h.work, "results", "oidc-*"))
	md := filepath.Join(h.work, "results", "COMPARISON.md")
	h.mustRun(nil, "", h.tool("aggregate"), append(append([]string{"report"}, runs...), "-o", md)...)
	text := readFile(t, md)
	for _, name := range names {
		if !strings.Contains(text, "| S1 discovery | "+name+" |") {
			t.Errorf("COMPARISON.md has no S1 row for %s", name)
		}
	}
}

// checkOIDCCase runs one case (see TestCheckOIDC) and returns the product
// name its configuration gives.
func checkOIDCCase(h *harness, c string) string {
	state, cfg := filepath.Join(h.work, "state", c), filepath.Join(h.work, c+".env")
	run := filepath.Join(h.work, "results", "oidc-"+c)
	var text string
	port, down := 0, func() {}
	if c == "refop-start" {
		h.mustRun(nil, "", h.adapter("refop"), "install")
		port = freePort(h.t)
		text = configRefopStart(h, port)
	} else {
		down = h.ownUp(c, state)
		text = map[string]func(*harness, string) string{
			"hydra": configHydra, "keycloak": configKeycloak, "refop": configRefop,
		}[c](h, state)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
	name := h.configName(cfg)
	want := oidcRuns[strings.TrimSuffix(c, "-start")]
	h.checkPlan(cfg, want.ids)
	h.t.Logf("%s: run-comparison.sh --quick --only oidc as %s (IDPBENCH_OIDC_CONFIG=%s)", c, name, cfg)
	// One level a scenario: the check is of the adapter, what it measures and
	// records, not of the ladder (TestE2EQuickRun checks the quick ladder).
	env := h.with("IDPBENCH_OIDC_CONFIG="+cfg, "IDPBENCH_RESULTS="+filepath.Join(h.work, "results"),
		"IDPBENCH_GCJITTER_S="+envOr("IDPBENCH_GCJITTER_S", "15"), "IDPBENCH_LADDER="+envOr("IDPBENCH_LADDER", "8"))
	if code, out := h.run(env, filepath.Join(h.work, "run-"+c+".log"), h.script("run-comparison.sh"),
		"--quick", "--fresh", "--repeats", "1", "--only", "oidc", "--run-id", "oidc-"+c); code != 0 {
		h.t.Fatalf("%s: run-comparison.sh --only oidc failed (exit %d): %s", c, code, tail(out, 20))
	}
	if c == "keycloak" {
		consentOnKeycloak(h, state, cfg) // after the run, while Keycloak is up
	}
	down()
	if port != 0 {
		coldStartsOf(h.t, c, run, name, port)
	}
	steadyRows(h, run, name, want.ids...)
	recordsOf(h.t, run, name)
	naOf(h.t, run, want.na)
	if s := readStep(h.t, filepath.Join(run, "oidc", "auth_code-c"+envOr("IDPBENCH_LADDER", "8")+".json")); !slices.Equal(s.RequestOrder, want.login) {
		h.t.Errorf("%s: S4's requests %v, want %v", c, s.RequestOrder, want.login)
	}
	return name
}

// consentOnKeycloak: with consent required of the client (its admin API),
// S4 through the generic adapter's own loadstep arguments answers
// Keycloak's consent page (behind a redirect, remembered per user): a short
// paced step with every iteration ok, the consent hops sent.
func consentOnKeycloak(h *harness, state, cfg string) {
	h.bash(nil, `st="$1"; source "$st/state.env"; base="${ISSUER%/realms/*}"
		tok="$(tr -d '\n' <"$st/secrets/admin" | curl -sS --fail --data-urlencode password@- -d grant_type=password \
			-d client_id=admin-cli -d username=admin "$base/realms/master/protocol/openid-connect/token" | jq -er .access_token)"
		(umask 077 && printf 'Authorization: Bearer %s\n' "$tok" >"$st/admin.header")
		id="$(curl -sS --fail -H @"$st/admin.header" "$base/admin/realms/bench/clients?clientId=bench-svc" | jq -er '.[0].id')"
		curl -sS --fail -H @"$st/admin.header" "$base/admin/realms/bench/clients/$id" | jq '.consentRequired = true' |
			curl -sS --fail -X PUT -H @"$st/admin.header" -H 'Content-Type: application/json' --data @- "$base/admin/realms/bench/clients/$id"
		rm -f "$st/admin.header"`, state)
	disc := filepath.Join(h.work, "consent-state")
	if err := os.MkdirAll(disc, 0o700); err != nil {
		h.t.Fatal(err)
	}
	oidcCmd := func(verb string, args ...string) []string {
		out := h.mustRun(nil, "", h.tool("provision"), append([]string{"oidc", verb, "--config", cfg, "--state", disc}, args...)...)
		return lines(out)
	}
	oidcCmd("discover")
	args := append([]string{"--url", oidcCmd("endpoint", "auth_code")[0], "--scenario", "auth_code", "--rate", "4", "--duration", "4s",
		"--warmup", "0s"}, oidcCmd("loadargs", "auth_code")...)
	out := filepath.Join(disc, "auth_code-consent.json")
	h.mustRun(nil, "", h.tool("loadstep"), append(args, "-o", out)...)
	s := readStep(h.t, out)
	consents := s.RequestsByName["login_consent"]
	if s.Requests == 0 || s.OK != s.Requests || consents.Requests == 0 || consents.OK != consents.Requests ||
		s.RequestsByName["login_consent_page"].Requests != consents.Requests {
		h.t.Errorf("keycloak with consent required: %d iterations, %d ok, by name %+v", s.Requests, s.OK, s.RequestsByName)
		return
	}
	h.t.Logf("ok: keycloak with consent required: %d iterations ok, %d consent pages answered", s.OK, consents.Requests)
}

// checkPlan: provision oidc check on cfg exits 0 and plans to run every
// scenario of ids (with the IdP up, nothing is left "at up"), the others N/A.
func (h *harness) checkPlan(cfg string, ids []string) {
	h.t.Helper()
	out := h.mustRun(nil, "", h.tool("provision"), "oidc", "check", "--config", cfg)
	for _, sc := range schema.Scenarios {
		if sc.Name == schema.ScenarioRequest {
			continue
		}
		status := "N/A"
		if slices.Contains(ids, sc.ID) {
			status = "run"
		}
		row := regexp.MustCompile(`(?m)^  ` + sc.ID + ` +` + sc.Name + ` +(run|N/A|at up) `).FindStringSubmatch(out)
		if row == nil || row[1] != status && !(status == "run" && row[1] == "at up") {
			h.t.Errorf("provision oidc check: %s %s not planned %s:\n%s", sc.ID, sc.Name, status, out)
		}
	}
	h.t.Logf("provision oidc check --config %s:\n%s", cfg, out)
}

// naOf: each scenario of na is N/A in the run's meta, its reason starting
// as given (the file's reason, quoted).
func naOf(t *testing.T, run string, na map[string]string) {
	t.Helper()
	m := readMeta(t, filepath.Join(run, "oidc", "meta.json"))
	for s, why := range na {
		if !strings.HasPrefix(m.ScenarioNA[s], why) {
			t.Errorf("meta.json: %s N/A %q, want a reason starting %q", s, m.ScenarioNA[s], why)
		}
	}
}

// checkOIDCPreflight: a run whose configuration's IdP does not answer (no
// START_COMMAND, nothing on its port) stops at the run's preflight, before
// anything is installed or started: exit 1, the check's reason in the log,
// no run directory.
func checkOIDCPreflight(h *harness) {
	cfg, run := filepath.Join(h.work, "down.env"), filepath.Join(h.work, "results", "oidc-preflight")
	text := h.example("myidp.env") + "NAME=oidc:down\nISSUER=http://127.0.0.1:" + strconv.Itoa(freePort(h.t)) + "/\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
	env := h.with("IDPBENCH_OIDC_CONFIG="+cfg, "IDPBENCH_RESULTS="+filepath.Join(h.work, "results"))
	code, out := h.run(env, filepath.Join(h.work, "run-preflight.log"), h.script("run-comparison.sh"),
		"--quick", "--fresh", "--repeats", "1", "--only", "oidc", "--run-id", "oidc-preflight")
	if code != 1 || !strings.Contains(out, "check: 1 problem(s) in "+cfg) || !strings.Contains(out, "no answer") ||
		!strings.Contains(out, "preflight: the IdP of "+cfg+" did not answer") {
		h.t.Fatalf("run-comparison.sh with an IdP that does not answer: exit %d, want 1 with the preflight's reason: %s", code, tail(out, 20))
	}
	if _, err := os.Stat(run); !os.IsNotExist(err) {
		h.t.Errorf("the run went on after a failed preflight: %s is there (%v)", run, err)
	}
	h.t.Logf("ok: the preflight stopped the run before anything was installed")
}

// ownUp installs, starts and sets up a product through its own adapter; the
// returned func takes it down, failing the test when down leaves anything.
func (h *harness) ownUp(product, state string) (down func()) {
	adapter := h.adapter(product)
	h.mustRun(nil, "", adapter, "install")
	up := true
	down = func() {
		if !up {
			return
		}
		up = false
		if code, out := h.run(nil, "", adapter, "down", state); code != 0 {
			h.t.Errorf("%s: its own adapter's down left something behind: %s", product, tail(out, 10))
		}
	}
	h.t.Cleanup(down) // after a failed check too
	h.mustRun(nil, "", adapter, "up", state)
	h.mustRun(nil, "", adapter, "setup", state)
	return down
}

// stateValue is a value an adapter recorded in STATE/state.env ("" when none).
func (h *harness) stateValue(state, key string) string {
	return strings.TrimSpace(h.bash(nil, `source "$1/state.env"; printf '%s\n' "${!2:-}"`, state, key))
}

// stateDSN is the DSN of database db on the cluster the adapter used.
func (h *harness) stateDSN(state, db string) string {
	dir := h.stateValue(state, "PG_PRIVATE_DIR")
	if dir == "" {
		dir = h.stateValue(state, "PG_SHARED_DIR")
	}
	return strings.TrimSpace(h.bash(nil, `source "$IDPBENCH_ROOT/scripts/lib/postgres.sh"; IDPBENCH_PG_DIR="$1" pg_dsn "$2"`, dir, db))
}

// example is examples/oidc/FILE, ending with a newline.
func (h *harness) example(file string) string {
	s := readFile(h.t, filepath.Join(h.root, "examples", "oidc", file))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// fromTemplate is a configuration copied from the template as a user makes
// one: the template, then the example's values, then lines of this server's
// (a later line wins).
func (h *harness) fromTemplate(example string, lines ...string) string {
	return h.example("myidp.env") + "# --- the values of examples/oidc/" + example + "\n" + h.example(example) +
		strings.Join(lines, "\n") + "\n"
}

// configHydra is the template with examples/oidc/hydra.env's values and this
// Hydra's ports and files.
func configHydra(h *harness, state string) string {
	issuer, admin := h.stateValue(state, "ISSUER"), h.stateValue(state, "ADMIN_URL")
	return h.fromTemplate("hydra.env",
		"# --- TestCheckOIDC: this Hydra (products/hydra/adapter, state "+state+")",
		"ISSUER="+issuer,
		"READY_URL="+issuer+"health/ready",
		"CLIENT_SECRET_FILE="+filepath.Join(state, "secrets", "bench-svc"),
		"INTROSPECTION_ENDPOINT="+admin+"/admin/oauth2/introspect",
		"LOGIN_ADMIN_URL="+admin,
		"MATCH=hydra[^ ]* serve all .*-c "+regexp.QuoteMeta(filepath.Join(state, "hydra.yml")),
		"PG_DSN="+h.stateDSN(state, "hydra"),
	)
}

// envOr is the environment's value of name, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// configKeycloak is the template with examples/oidc/keycloak.env's values
// and this Keycloak's.
func configKeycloak(h *harness, state string) string {
	users := envOr("IDPBENCH_KEYCLOAK_USERS", "20")
	return h.fromTemplate("keycloak.env",
		"# --- TestCheckOIDC: this Keycloak (products/keycloak/adapter, state "+state+")",
		"ISSUER="+h.stateValue(state, "ISSUER"),
		"READY_URL=http://127.0.0.1:"+h.stateValue(state, "MGMT_PORT")+"/health/ready",
		"CLIENT_SECRET_FILE="+filepath.Join(state, "secrets", "bench-svc"),
		"PASSWORD_FILE="+filepath.Join(state, "secrets", "users-password"),
		"USERS="+users,
		"ACCESS_TOKEN_TTL_S=3600",
		`MATCH=kc\.sh start .*--http-port=`+h.stateValue(state, "HTTP_PORT")+"( |$)",
		"PG_DSN="+h.stateDSN(state, "keycloak"),
	)
}

// configRefop is the template with examples/oidc/refop.env's values,
// pointed at a reference OP that its own adapter started (so no
// START_COMMAND); its user tokens come from TOKEN_COMMAND (mintpool's
// form-page login), so that path runs too; its service key is copied 0600
// (the module cache's is 0444).
func configRefop(h *harness, state string) string {
	issuer := h.stateValue(state, "ISSUER")
	web, pw := filepath.Join(state, "secrets", "web"), filepath.Join(state, "secrets", "user-password")
	key := filepath.Join(h.work, "refop-service-key1.pem")
	if err := os.WriteFile(key, []byte(readFile(h.t, h.stateValue(state, "REFOP_KEY"))), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return h.fromTemplate("refop.env",
		"# --- TestCheckOIDC: this reference OP (products/refop/adapter, state "+state+")",
		"ISSUER="+issuer,
		"READY_URL="+issuer+".well-known/openid-configuration",
		"START_COMMAND=",
		"CLIENT_SECRET_FILE="+filepath.Join(state, "secrets", "sid1"),
		"USER_CLIENT_SECRET_FILE="+web,
		"PASSWORD_FILE="+pw,
		"JWT_BEARER_KEY_FILE="+key,
		"USER_TOKENS=command",
		"TOKEN_COMMAND=mintpool --flow form-page --issuer "+issuer+" --client-id web --client-secret-file "+web+
			" --redirect-uri http://localhost:9999/auth/callback --username test-user@localhost --password-file "+pw+
			` --scope "openid offline_access" -n "$IDPBENCH_POOL_COUNT" -P 8 --emit "$IDPBENCH_POOL_EMIT" --product oidc:refop -o -`,
		"PIDFILE="+filepath.Join(state, "pids", "refop.pid"),
	)
}

// configRefopStart is the template with examples/oidc/refop.env's values
// as shipped, on port, its files in this run's cache (products/refop/adapter
// install writes them there; the example names the default cache).
func configRefopStart(h *harness, port int) string {
	cache := envOr("IDPBENCH_CACHE", filepath.Join(os.Getenv("HOME"), ".cache", "idpbench"))
	text := h.fromTemplate("refop.env", "# --- TestCheckOIDC: the example as shipped, on a free port", "NAME=oidc:refop-start")
	return strings.ReplaceAll(strings.ReplaceAll(text, "19998", strconv.Itoa(port)), "~/.cache/idpbench", cache)
}

// configName is the NAME a configuration gives the product (provision oidc env).
func (h *harness) configName(cfg string) string {
	out := h.mustRun(nil, "", h.tool("provision"), "oidc", "env", "--config", cfg)
	for _, l := range lines(out) {
		if name, ok := strings.CutPrefix(l, "NAME="); ok {
			return name
		}
	}
	h.t.Fatalf("provision oidc env --config %s: no NAME= line: %s", cfg, out)
	return ""
}

// tool is the path of a built tool.
func (h *harness) tool(name string) string { return filepath.Join(h.bin, name) }

// coldStartsOf: the generic adapter started the product itself: complete
// cold starts A and B of the configured product, and its port free again.
func coldStartsOf(t *testing.T, c, run, name string, port int) {
	t.Helper()
	if !portFree(port) {
		t.Errorf("%s: port %d is still in use after down", c, port)
	}
	for _, m := range []string{"A", "B"} {
		path := filepath.Join(run, "oidc", "coldstart-"+m+".json")
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%s: coldstart-%s.json missing: %v", c, m, err)
			continue
		}
		rec, err := schema.DecodeColdstart(f, path)
		f.Close()
		if err != nil || rec.Status != "complete" || rec.Product != name {
			t.Errorf("%s: coldstart-%s.json not complete or not %s: %+v %v", c, m, name, rec, err)
		}
	}
}

// steadyRows: each scenario of ids has a steady step with numbers and zero
// failed requests for product name (aggregate steady).
func steadyRows(h *harness, run, name string, ids ...string) {
	h.t.Helper()
	out := h.mustRun(nil, "", h.tool("aggregate"), "steady", run)
	rows := map[string]model.CellRow{}
	for _, l := range lines(out) {
		var r model.CellRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			h.t.Fatalf("aggregate steady %s: %v: %s", run, err, l)
		}
		if r.Product == name {
			rows[r.ID] = r
		}
	}
	for _, id := range ids {
		r, ok := rows[id]
		switch {
		case !ok:
			h.t.Errorf("%s %s: no row in the comparison", name, id)
		case !r.Steady || r.QPS <= 0 || r.Failed != 0:
			h.t.Errorf("%s %s: want numbers with zero errors at the steady step, got %+v", name, id, r)
		default:
			h.t.Logf("ok: %s %s c=%d qps=%.0f p50=%vms p99=%vms failed=%d", name, id, r.Connections, r.QPS, r.P50MS, r.P99MS, r.Failed)
		}
	}
}

// recordsOf: the meta names the product with status ok; the sampler
// recorded its process tree under that name; the GC-jitter run completed.
func recordsOf(t *testing.T, run, name string) {
	t.Helper()
	dir := filepath.Join(run, "oidc")
	if m := readMeta(t, filepath.Join(dir, "meta.json")); m.Product != name || m.Status != "ok" {
		t.Errorf("%s: meta.json does not name %s with status ok: product %q, status %q (%s)", name, name, m.Product, m.Status, m.NAReason)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "samples*.jsonl"))
	if len(files) == 0 {
		t.Errorf("%s: no sampler records", name)
	} else if !sampledProcess(t, files, "process:"+name) {
		t.Errorf("%s: the sampler recorded no process:%s", name, name)
	}
	if s := readStep(t, filepath.Join(dir, "gcjitter.json")); s.Status != "complete" {
		t.Errorf("%s: gcjitter.json is %q, want complete", name, s.Status)
	}
}

// sampledProcess reports whether any of the sample files has a record of
// source with a resident set.
func sampledProcess(t *testing.T, files []string, source string) bool {
	t.Helper()
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := schema.DecodeSamples(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			if s.Source == source && s.RSSBytes > 0 {
				return true
			}
		}
	}
	return false
}
