package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/nginxtest"
	"github.com/idpbench/idpbench/internal/readback"
	"github.com/idpbench/idpbench/internal/sample"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products"
)

// TestE2EPostgresLoopback: the PostgreSQL test.sh started for the
// integration tests (IDPBENCH_PG_DIR) listens on loopback only, its sockets
// read from /proc by readback as for every product (--listeners).
func TestE2EPostgresLoopback(t *testing.T) {
	dir := need(t, "IDPBENCH_PG_DIR")[0]
	pid, err := sample.ReadPidfile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	facts, err := readback.Read(t.Context(), readback.Config{Product: "postgresql", Group: pid, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var addrs string
	for _, f := range facts.Facts {
		if f.Name == "listeners" {
			addrs = f.Value
		}
	}
	if err := LoopbackOnly("PostgreSQL", addrs); err != nil {
		t.Fatal(err)
	}
	t.Logf("ok: PostgreSQL listens on loopback only: %s", addrs)
}

// TestE2EBeyondLoopback: a server that listens on every interface (a static
// discovery document served by python3 on 0.0.0.0, started by the generic
// oidc adapter) fails its up naming the socket, and down stops it.
func TestE2EBeyondLoopback(t *testing.T) {
	need(t, "IDPBENCH_BIN")
	needCmd(t, "python3")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir, port := t.TempDir(), freePort(t)
	writeFile(t, filepath.Join(dir, "www", ".well-known", "openid-configuration"),
		fmt.Sprintf("{\"issuer\": \"http://127.0.0.1:%d/\"}\n", port))
	writeFile(t, filepath.Join(dir, "beyond.env"), strings.Join([]string{"NAME=oidc:beyond-loopback",
		fmt.Sprintf("ISSUER=http://127.0.0.1:%d/", port), "READY_TIMEOUT_S=30",
		fmt.Sprintf("START_COMMAND=exec python3 -m http.server --bind 0.0.0.0 --directory www %d", port)}, "\n")+"\n")
	env := []string{"IDPBENCH_OIDC_CONFIG=" + filepath.Join(dir, "beyond.env")}
	state, reason := filepath.Join(dir, "state"), filepath.Join(dir, "reason")
	stdout, stderr, err := runErr(ctx, append(env, "IDPBENCH_REASON_FILE="+reason),
		filepath.Join(repoRoot(t), "products", "oidc", "adapter"), "up", state)
	adapter(ctx, t, env, "oidc", "down", state)
	out := stdout + stderr
	refused := regexp.MustCompile(fmt.Sprintf(`listens beyond loopback: 0\.0\.0\.0:%d \(pid [0-9]* python3\)`, port))
	if err == nil || !refused.MatchString(out) {
		t.Fatalf("a server on 0.0.0.0:%d: want its up refused naming the socket, got %v: %s", port, err, out)
	}
	// The reason a run's N/A meta gives: readback's, the first failure, not the adapter's die after it.
	why, rerr := os.ReadFile(reason)
	if rerr != nil || !regexp.MustCompile(`^oidc:beyond-loopback listens beyond loopback: 0\.0\.0\.0:`).Match(why) {
		t.Fatalf("IDPBENCH_REASON_FILE after the refused up: %q, %v; want readback's line naming the socket", why, rerr)
	}
	t.Logf("ok: a server on 0.0.0.0:%d is refused after its start: %s; the reason left for the run: %s",
		port, refused.FindString(out), strings.TrimSpace(string(why)))
}

// TestE2EZitadelNative: the Zitadel adapter's native mode on a stand-in
// binary (products/zitadel/zitadeltest/standin, built here; no Zitadel runs
// here, docs/products/zitadel.md): start-from-init, then start; the masterkey
// from the environment only, 0600; the first instance's PAT where the
// generated config says; both cold starts; the start command in the meta;
// and down leaving nothing behind. It uses the shared PostgreSQL
// (IDPBENCH_PG_DIR).
func TestE2EZitadelNative(t *testing.T) {
	need(t, "IDPBENCH_BIN", "IDPBENCH_PG_DIR")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	st, log := filepath.Join(dir, "zitadel"), filepath.Join(dir, "zitadel-standin.log")
	env := []string{"ZITADEL_BIN=" + nginxtest.Build(t, "products/zitadel/zitadeltest/standin")["standin"],
		"ZITADEL_STANDIN_LOG=" + log}
	adapter(ctx, t, env, "zitadel", "install")
	adapter(ctx, t, env, "zitadel", "up", st)
	t.Cleanup(func() { adapter(context.Background(), t, env, "zitadel", "down", st) })
	adapter(ctx, t, env, "zitadel", "restart", st)

	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		first, _, _ := strings.Cut(line, " ")
		starts = append(starts, first)
	}
	if strings.Join(starts, " ") != "start-from-init start" {
		t.Errorf("zitadel native: want start-from-init then start, got %s", b)
	}
	key, kerr := os.Stat(filepath.Join(st, "secrets", "masterkey"))
	pat, perr := os.Stat(filepath.Join(st, "secrets", "zitadel-admin-sa.pat"))
	if kerr != nil || perr != nil || key.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0o600 || pat.Size() == 0 {
		t.Errorf("zitadel native: want a 0600 masterkey and the first instance's PAT in %s/secrets (%v, %v)", st, kerr, perr)
	}
	for _, m := range []string{"A", "B"} {
		c, err := readColdstart(filepath.Join(st, "coldstart-"+m+".json"))
		if err != nil || c.Status != schema.StatusComplete {
			t.Errorf("zitadel native: coldstart-%s.json not complete (%v)", m, err)
		}
	}
	// The meta as the run writes it: provision meta on the entry and the state.
	version := strings.TrimSpace(adapter(ctx, t, env, "zitadel", "version"))
	entry, _ := products.Lookup("zitadel")
	name, metaArgs, err := entry.MetaArgs(st)
	if err != nil {
		t.Fatal(err)
	}
	out := run(ctx, t, env, tool(t, "provision"), append([]string{"meta", "--product", name, "--product-version", version, "--state", st}, metaArgs...)...)
	meta, err := schema.DecodeMeta(strings.NewReader(out), "zitadel meta")
	if err != nil || !strings.Contains(meta.Settings["start"], "start-from-init") {
		t.Errorf("zitadel native: meta without the start command (%v)", err)
	}
	if !t.Failed() {
		t.Logf("ok: zitadel native on the stand-in: %s; masterkey 0600, PAT, cold starts A and B, meta start %q",
			strings.Join(starts, ", "), meta.Settings["start"])
	}
}

func readColdstart(path string) (*schema.Coldstart, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return schema.DecodeColdstart(f, path)
}
