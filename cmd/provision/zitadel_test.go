package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/products/zitadel/zitadeltest"
)

func runArgs(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// zitadelArgs runs "provision zitadel ARGS...".
func zitadelArgs(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runArgs(t, ctx, append([]string{"zitadel"}, args...)...)
}

func TestZitadelBadFlags(t *testing.T) {
	t.Setenv("IDPBENCH_ZITADEL_PAT", "")
	dir := t.TempDir()
	pat := filepath.Join(dir, "admin.pat")
	os.WriteFile(pat, []byte("pat\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	ok := []string{"--issuer", "http://localhost:8080", "--pat-file", pat, "--out-dir", dir}
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"no issuer", []string{"--pat-file", pat, "--out-dir", dir}, "--issuer"},
		{"relative issuer", []string{"--issuer", "localhost:8080", "--pat-file", pat, "--out-dir", dir}, "--issuer"},
		{"no pat", []string{"--issuer", "http://localhost:8080", "--out-dir", dir}, "--pat-file"},
		{"missing pat file", []string{"--issuer", "http://localhost:8080", "--pat-file", filepath.Join(dir, "nope"), "--out-dir", dir}, "--pat-file"},
		{"empty pat file", []string{"--issuer", "http://localhost:8080", "--pat-file", empty, "--out-dir", dir}, "--pat-file"},
		{"no out dir", []string{"--issuer", "http://localhost:8080", "--pat-file", pat}, "--out-dir"},
		{"out dir missing", []string{"--issuer", "http://localhost:8080", "--pat-file", pat, "--out-dir", filepath.Join(dir, "nope")}, "--out-dir"},
		{"zero users", append([]string{"--users", "0"}, ok...), "--users"},
		{"bad users", append([]string{"--users", "many"}, ok...), "users"},
		{"pattern without %d", append([]string{"--username", "bench"}, ok...), "--username"},
		{"bad redirect", append([]string{"--redirect-uri", "/cb"}, ok...), "--redirect-uri"},
		{"zero parallel", append([]string{"-P", "0"}, ok...), "-P"},
		{"bad timeout", append([]string{"--timeout", "soon"}, ok...), "timeout"},
		{"unknown flag", append([]string{"--bogus"}, ok...), "--bogus"},
		{"positional", append([]string{"extra"}, ok...), "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := zitadelArgs(t, context.Background(), tt.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "provision zitadel: ") || !strings.Contains(stderr, tt.flag) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and an error naming %s", code, stdout, stderr, tt.flag)
			}
		})
	}
}

func TestZitadelHelpAndVersion(t *testing.T) {
	code, stdout, _ := zitadelArgs(t, context.Background(), "--help")
	if code != 0 || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "mintpool --flow session-api") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
	for _, f := range []string{"--issuer", "--pat-file", "--out-dir", "--org-id", "--prefix", "--users", "--username", "--redirect-uri",
		"--jwt-access-tokens", "-P,", "--timeout", "--request-timeout", "--version"} {
		if !strings.Contains(stdout, f) {
			t.Errorf("--help lacks %s", f)
		}
	}
	code, stdout, _ = zitadelArgs(t, context.Background(), "--version")
	if code != 0 || !strings.HasPrefix(stdout, "provision ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

func TestZitadelEndToEnd(t *testing.T) {
	f := zitadeltest.NewFake(t)
	dir := t.TempDir()
	t.Setenv("IDPBENCH_ZITADEL_PAT", f.AdminPAT)
	args := []string{"--issuer", f.URL, "--out-dir", dir, "--users", "3", "--timeout", "20s"}
	code, stdout, stderr := zitadelArgs(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Schema string `json:"schema"`
		Users  struct {
			Count        int    `json:"count"`
			PasswordFile string `json:"password_file"`
		} `json:"users"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Schema != "idpbench.zitadel-setup/v1" || sum.Users.Count != 3 ||
		sum.Users.PasswordFile != filepath.Join(dir, "user-password") {
		t.Errorf("summary %q (%v)", stdout, err)
	}
	if strings.Contains(stdout+stderr, f.AdminPAT) {
		t.Error("PAT printed")
	}

	// A second run with the same prefix meets "already exists": exit 1,
	// the call named, the first run's files untouched.
	before, _ := os.ReadFile(filepath.Join(dir, "user-password"))
	code, stdout, stderr = zitadelArgs(t, context.Background(), args...)
	after, _ := os.ReadFile(filepath.Join(dir, "user-password"))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "provision zitadel: AddProject (POST /management/v1/projects): HTTP 409") || string(before) != string(after) {
		t.Errorf("re-run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := t.TempDir()
	if code, _, stderr := zitadelArgs(t, ctx, "--issuer", f.URL, "--out-dir", other, "--prefix", "x"); code != 130 {
		t.Errorf("interrupted: exit %d, stderr %q", code, stderr)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("files after an interrupt: %v", ents)
	}
}
