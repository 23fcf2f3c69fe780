package zitadeltest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/nginxtest"
	"github.com/idpbench/idpbench/products/zitadel"
	"github.com/idpbench/idpbench/products/zitadel/zitadeldefs"
)

// TestAdapterAgainstFake drives products/zitadel/adapter's setup, pools and
// loadargs entry points, with the real tools, against the fake Zitadel built
// from the recorded API shapes. No Zitadel runs here; what this checks is the
// glue: the flags the adapter passes exist in the tools, the setup summary
// holds what the adapter reads, and a short auth_code step with the
// adapter's arguments completes every login.
func TestAdapterAgainstFake(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the tools and runs the adapter")
	}
	// Missing, they skip the test, or fail it under IDPBENCH_INTEGRATION=1.
	for tool, pkg := range map[string]string{"bash": "bash", "jq": "jq", "go": "golang-go"} {
		nginxtest.Need(t, tool, pkg)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", "./cmd/provision", "./cmd/mintpool", "./cmd/loadstep")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the tools: %v\n%s", err, out)
	}

	f := NewFake(t)
	f.Lag = 1
	state := filepath.Join(dir, "state")
	for _, d := range []string{"secrets", "pools", "pids", "logs"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(state, "state.env"), "ISSUER="+f.URL+"\nKEY_DIR="+filepath.Join(state, "secrets")+"\n")
	writeFile(filepath.Join(state, "secrets", "zitadel-admin-sa.pat"), f.AdminPAT+"\n")

	adapter := filepath.Join(root, "products", "zitadel", "adapter")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "IDPBENCH_BIN=" + bin,
		"IDPBENCH_CACHE=" + filepath.Join(dir, "cache"), "IDPBENCH_TMP=" + dir}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, adapter, args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("zitadel %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if strings.Contains(string(out)+stderr.String(), f.AdminPAT) {
			t.Errorf("zitadel %s printed the admin PAT", args[0])
		}
		return string(out)
	}

	seen := 0
	run("setup", state)
	seen = logChecked(t, f, "provision zitadel", seen)
	var sum struct {
		Users struct {
			Count int `json:"count"`
		} `json:"users"`
	}
	b, err := os.ReadFile(filepath.Join(state, "zitadel-setup.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil || sum.Users.Count != 100 || f.HumanUsers() != 100 {
		t.Fatalf("setup summary %s (%v): want 100 users, the fake has %d", b, err, f.HumanUsers())
	}

	pool := filepath.Join(state, "pools", "userinfo.pool")
	run("pools", state, "userinfo", "6", pool)
	seen = logChecked(t, f, "mintpool --flow session-api", seen)
	p, err := os.ReadFile(pool)
	if err != nil || strings.Count(strings.TrimSpace(string(p)), "\n") != 6 { // header + 6 tokens
		t.Fatalf("userinfo pool: %v\n%s", err, p)
	}

	// The ladder's answer for S4, read in-process from the entry and the state.
	ans, err := zitadel.Product().Answer(state, "auth_code")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--url", ans.Endpoint, "--scenario", "auth_code", "-c", "2", "--warmup", "0s",
		"--duration", "1s", "--product", "zitadel"}, ans.Load...)
	step := exec.CommandContext(ctx, filepath.Join(bin, "loadstep"), args...)
	step.Env = env
	out, err := step.Output()
	if err != nil {
		t.Fatalf("loadstep %v: %v", args, err)
	}
	var s struct {
		Requests     int64    `json:"requests"`
		OK           int64    `json:"ok"`
		RequestOrder []string `json:"request_order"`
	}
	if err := json.Unmarshal(out, &s); err != nil || s.Requests == 0 || s.OK != s.Requests {
		t.Fatalf("auth_code step with the adapter's arguments: %v\n%.600s", err, out)
	}
	logChecked(t, f, "loadstep --login session-api", seen)
	if strings.Join(s.RequestOrder, " ") != "login_authorize login_session login_finalize oidc_token" {
		t.Errorf("request_order %v", s.RequestOrder)
	}
	for _, name := range []string{"login-client.pat", "user-password", "web-secret"} {
		secret, err := os.ReadFile(filepath.Join(state, "secrets", name))
		if err != nil || len(strings.TrimSpace(string(secret))) < 8 {
			t.Fatalf("secrets/%s: %v", name, err)
		}
		if strings.Contains(string(out), strings.TrimSpace(string(secret))) {
			t.Errorf("the step result holds secrets/%s", name)
		}
	}
}

// logChecked logs, once per call, what the requests after the first from
// were checked against (the definitions' method, when loaded) and returns
// the new count. With the definitions named (IDPBENCH_ZITADEL_PROTO, as
// scripts/test.sh sets it) a call of Zitadel's own API that they did not
// check is an error.
func logChecked(t *testing.T, f *Fake, tool string, from int) int {
	t.Helper()
	reqs := f.Requests()
	defsSet := os.Getenv(zitadeldefs.EnvDir) != ""
	done := map[string]bool{}
	for _, r := range reqs[from:] {
		if done[r.Call] {
			continue
		}
		done[r.Call] = true
		switch {
		case OIDCCalls[r.Call]:
			t.Logf("%s: %s (%s %s): OIDC endpoint, checked against its record only", tool, r.Call, r.Method, r.Path)
		case r.Checked == "" && defsSet:
			t.Errorf("%s: %s (%s %s) was not checked against the definitions, though %s is set", tool, r.Call, r.Method, r.Path, zitadeldefs.EnvDir)
		case r.Checked == "":
			t.Logf("%s: %s (%s %s): checked against its written shape; definitions not loaded", tool, r.Call, r.Method, r.Path)
		default:
			t.Logf("verified %s: %s as sent: %s", tool, r.Call, r.Checked)
		}
	}
	if len(done) == 0 {
		t.Errorf("%s made no request to the fake", tool)
	}
	return len(reqs)
}
