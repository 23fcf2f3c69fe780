package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products"
)

// TestMainFlow: a whole run over stand-ins (testdata: adapters, the
// PostgreSQL library, aggregate, provision) of five products: ok (its
// GC-jitter record complete from an earlier session: skipped), noinstall
// (install fails: an N/A row, the reason its adapter left, a failure),
// upfail (up fails: N/A, downed), gcfail (the GC-jitter run fails: N/A,
// downed) and unavail (install fails as its entry declares, NAByDesign: an
// N/A row, no failure). Every scenario is N/A (the ladder exits 3: go on),
// so no cell has a capacity to measure shares of.
// The run says its plan first and exits 1, its last lines the failures of
// noinstall, upfail and gcfail (not unavail's); each meta says why; every
// product that came up is downed, PostgreSQL too; the phases end with the
// cleanup; the run state is gone.
func TestMainFlow(t *testing.T) {
	tmp, results, calls := flowEnv(t)
	runDir := filepath.Join(results, "t")
	step, err := os.ReadFile(filepath.Join("..", "schema", "testdata", "step-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(runDir, "ok"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "ok", "gcjitter.json"), step, 0o644); err != nil {
		t.Fatal(err)
	}
	code, log := flowMain(t, "--quick", "--only", "ok,noinstall,upfail,gcfail,unavail", "--run-id", "t")
	if code != 1 {
		t.Fatalf("exit %d, want 1; log:\n%s", code, log)
	}
	for p, want := range map[string][]string{
		"ok":        {"--base", "--status\nok\n", "--rounds\n1\n"},
		"noinstall": {"--status\nna\n", "--na-reason\nnoinstall: install broke\n"},
		"upfail":    {"--base", "--status\nna\n", "--na-reason\nup failed: upfail: up broke\n"},
		"gcfail":    {"--status\nna\n", "--na-reason\nfailed in the GC-jitter run (exit 1)\n"},
		"unavail":   {"--status\nna\n", "--na-reason\nunavail: install broke\n"},
	} {
		b, err := os.ReadFile(filepath.Join(runDir, p, "meta.json"))
		for _, w := range want {
			if err != nil || !strings.Contains(string(b), w) {
				t.Errorf("%s meta.json (provision meta's arguments): no %q in %q (%v)", p, w, b, err)
			}
		}
	}
	got := lines(t, calls)
	for _, p := range []string{"ok", "upfail", "gcfail"} {
		if !slices.Contains(got, p+" down") {
			t.Errorf("%s was never downed; calls: %q", p, got)
		}
	}
	if slices.Contains(got, "noinstall up") {
		t.Errorf("noinstall was started after its install failed; calls: %q", got)
	}
	phases := slices.DeleteFunc(slices.Clone(got), func(s string) bool { return !strings.HasPrefix(s, "phase ") })
	// Round 1 product after product, the interleaved round (no cell: every
	// scenario N/A), then each product's closing.
	want := []string{"phase PostgreSQL up", "phase ok install", "phase ok up (cold start A: fresh database)",
		"phase ok restart (cold start B: initialised database)", "phase ok setup", "phase ok ladder discovery", "phase ok ladder userinfo",
		"phase noinstall install", "phase upfail install",
		"phase upfail up (cold start A: fresh database)", "phase upfail meta + down after a failure",
		"phase gcfail install", "phase gcfail up (cold start A: fresh database)", "phase gcfail restart (cold start B: initialised database)",
		"phase gcfail setup", "phase gcfail ladder discovery", "phase gcfail ladder userinfo", "phase unavail install",
		"phase ok gcjitter", "phase ok meta + down", "phase gcfail gcjitter",
		"phase gcfail meta + down after a failure", "phase PostgreSQL down", "phase aggregate report", "phase cleanup (exit 1)", "phase end"}
	if !slices.Equal(phases, want) {
		t.Errorf("phases:\n%q\nwant\n%q", phases, want)
	}
	if !slices.Contains(got, "pg_down "+strings.TrimPrefix(got[slices.IndexFunc(got, func(s string) bool { return strings.HasPrefix(s, "pg_up ") })], "pg_up ")) {
		t.Errorf("PostgreSQL was not downed; calls: %q", got)
	}
	if _, err := os.Stat(StateDir(tmp, "t", runDir)); !os.IsNotExist(err) {
		t.Errorf("the run state is left (%v)", err)
	}
	if l, err := os.Readlink(filepath.Join(results, "latest")); err != nil || l != "t" {
		t.Errorf("results/latest -> %q (%v), want t", l, err)
	}
	for _, w := range []string{"run: == ok ladder discovery\n", "run: gcfail: failed in the GC-jitter run (exit 1)",
		"[step 1/67] ok gcjitter: complete, skipped", "run: ok: no windows at shares of capacity: no cell has a capacity",
		"run: unavail cannot run on this machine, as its registry entry declares: N/A in the report"} {
		if !strings.Contains(log, w) {
			t.Errorf("no %q in the log:\n%s", w, log)
		}
	}
	plan := "run: run t, quick profile: products ok noinstall upfail gcfail unavail; scenarios discovery userinfo; at most 2 rounds (round 1 included), budget none; at most 67 load steps; results in " + runDir + "\n"
	if i := strings.Index(log, plan); i < 0 || strings.Contains(log[:i], "install") {
		t.Errorf("the plan %q is not said before anything is installed:\n%s", plan, log)
	}
	summary := "run: 3 failure(s) of the products asked for; each is a row with its reason (its meta.json):\n"
	for _, f := range []string{"noinstall: install failed: noinstall: install broke", "upfail: up failed: upfail: up broke", "gcfail: failed in the GC-jitter run (exit 1)"} {
		summary += "run:   failed: " + f + "\n"
	}
	if !strings.Contains(stripTimes(log), stripTimes(summary)) || strings.Contains(log, "failed: unavail") {
		t.Errorf("the log does not end with the summary\n%swithout unavail:\n%s", summary, log)
	}
}

// stripTimes drops the "15:04:05 " of each log line.
func stripTimes(log string) string {
	return regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d `).ReplaceAllString(log, "")
}

// TestMainUnknownProduct: a product that is neither registered nor an
// adapter of the tree exits 2 before anything runs, naming it and listing
// the known products (the registry's and the tree's stand-ins).
func TestMainUnknownProduct(t *testing.T) {
	_, results, calls := flowEnv(t)
	code, log := flowMain(t, "--quick", "--only", "ok,keycloack,nosuch", "--run-id", "t")
	want := "run: error: --only: unknown product keycloack, nosuch (known: example, fake, gcfail, hydra, keycloak, nodeoidc, noinstall, oidc, ok, refop, spring, unavail, upfail, zitadel)\nTry 'scripts/run-comparison.sh --help'.\n"
	if code != 2 || stripTimes(log) != want {
		t.Errorf("exit %d, log %q; want 2 and %q", code, log, want)
	}
	if _, err := os.Stat(calls); !os.IsNotExist(err) {
		t.Errorf("something ran (%s: %v)", calls, err)
	}
	if _, err := os.Stat(filepath.Join(results, "t")); !os.IsNotExist(err) {
		t.Errorf("the run directory was made (%v)", err)
	}
}

// TestEarlierComposeDowned: a product that an earlier, killed session left
// up in compose mode (its state says MODE=compose) is downed through its
// adapter before the run state is cleaned: its containers outlive the
// killed compose client, on an engine that may be the user's. A product
// left in native mode is not (the pidfiles stop it), nor is one outside
// the run's products that has no adapter.
func TestEarlierComposeDowned(t *testing.T) {
	tmp, results, calls := flowEnv(t)
	state := StateDir(tmp, "t", filepath.Join(results, "t"))
	for dir, env := range map[string]string{"ok": "MODE=compose\nCOMPOSE_DB=ok\n", "upfail": "PG_SHARED_DIR=/x\n", "gone": "MODE=compose\n"} {
		if err := os.MkdirAll(filepath.Join(state, dir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(state, dir, "state.env"), []byte(env), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The earlier session's owner: a pid whose identity is not the live process's.
	if err := os.WriteFile(filepath.Join(state, "owner"), []byte("1\nnot-this-boot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// ok's GC-jitter run fails over the stand-ins (exit 1 in the end): not what this tests.
	code, log := flowMain(t, "--quick", "--only", "ok", "--run-id", "t")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want 0 or 1; log:\n%s", code, log)
	}
	got := lines(t, calls)
	if len(got) == 0 || got[0] != "ok down" {
		t.Errorf("calls %q: want ok's down first, before the run's own PostgreSQL and products", got)
	}
	if slices.Contains(got, "upfail down") || slices.Contains(got, "gone down") {
		t.Errorf("calls %q: a native product's or an unknown product's state was downed through an adapter", got)
	}
	if !strings.Contains(log, "an earlier session left ok up in compose mode") {
		t.Errorf("the log does not say why ok was downed:\n%s", log)
	}
}

// flowEnv points the run at the stand-ins of testdata (adapters,
// PostgreSQL, aggregate, provision) and a temporary directory; it returns
// that directory, the results directory and the file the stand-ins append
// their calls to.
func flowEnv(t *testing.T) (tmp, results, calls string) {
	t.Helper()
	t.Cleanup(func() { lookPath = lookPathReal })
	lookPath = func(string) (string, error) { return "", nil }
	root, _ := filepath.Abs(filepath.Join("testdata", "root"))
	bin, _ := filepath.Abs(filepath.Join("testdata", "bin"))
	tmp = t.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	results, calls = filepath.Join(tmp, "results"), filepath.Join(tmp, "calls")
	for k, v := range map[string]string{"IDPBENCH_ROOT": root, "IDPBENCH_BIN": bin, "IDPBENCH_TMP": tmp, "IDPBENCH_RESULTS": results,
		"IDPBENCH_SCENARIOS": "discovery userinfo", "IDPBENCH_PIN": "0", "FAKE_CALLS": calls, "FAKE_FAIL": "noinstall:install upfail:up unavail:install",
		"IDPBENCH_NO_BUILD": "1", "IDPBENCH_DRIVER_CPUS": "", "IDPBENCH_SERVER_CPUS": "", "IDPBENCH_REPEATS": "", "IDPBENCH_LADDER": "2",
		"IDPBENCH_PG_DIR": "", "RUN_DIR": "", "STATE_DIR": "", "IDPBENCH_ROUND": "", "IDPBENCH_FULL_LADDER": "", "IDPBENCH_REASON_FILE": ""} {
		t.Setenv(k, v)
	}
	return tmp, results, calls
}

// flowMain runs Main with args and returns its exit code and its log.
func flowMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	e := Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv,
		Setenv:   func(k, v string) error { t.Setenv(k, v); return nil },
		Unsetenv: func(k string) error { t.Setenv(k, ""); return os.Unsetenv(k) },
		Now:      time.Now, Started: time.Now(), Pid: os.Getpid(), Registry: Registry{Default: products.Default(), Names: products.Names(), Lookup: standIns}}
	code := Main(context.Background(), args, e)
	return code, stderr.String()
}

// standIns is the registry of the stand-in products: every scenario is N/A
// for each, and unavail declares its install's failure N/A by design, as
// Zitadel's entry does its own.
func standIns(name string) (product.Product, bool) {
	p := product.Product{Name: name, Ask: func(_, s string) (product.Answer, error) {
		return product.Answer{}, fmt.Errorf("%s %s: %w: a stand-in", name, s, product.ErrNA)
	}}
	if name == "unavail" {
		p.NAByDesign = product.Reasons{"unavail: install broke"}
	}
	return p, true
}

func lines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// TestMainHelpAndUsage: --help prints the help on stdout and exits 0, as
// --version the version; a bad command line is one line naming it and the
// hint at the script's --help, exit 2, and nothing is run.
func TestMainHelpAndUsage(t *testing.T) {
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"--help"}, 0, "Exit codes: 0 ok", ""},
		{[]string{"--quick", "--version"}, 0, "run ", ""},
		{[]string{"--quick", "--bogus"}, 2, "", "run: error: unknown argument --bogus\nTry 'scripts/run-comparison.sh --help'.\n"},
		{[]string{"--run-id", "a/b"}, 2, "", "run: error: bad run id: a/b\nTry 'scripts/run-comparison.sh --help'.\n"},
	} {
		var stdout, stderr strings.Builder
		e := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Now: time.Now, Started: time.Now(), Pid: os.Getpid()}
		code := Main(context.Background(), c.args, e)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) ||
			(c.code == 2 && (stdout.Len() > 0 || strings.Count(stderr.String(), "\n") != 2)) || (c.code == 0 && stderr.Len() > 0) {
			t.Errorf("run %q: exit %d, stdout %q, stderr %q; want %d, %q on stdout, %q on stderr",
				c.args, code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
	}
}
