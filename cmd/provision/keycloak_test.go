package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/products/keycloak"
	"github.com/idpbench/idpbench/products/keycloak/keycloaktest"
)

func writeSecretFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKeycloakBadFlags(t *testing.T) {
	t.Setenv("IDPBENCH_KEYCLOAK_ADMIN_PASSWORD", "")
	dir := t.TempDir()
	pw := writeSecretFile(t, dir, "admin", "pw\n")
	empty := writeSecretFile(t, dir, "empty", "")
	base := []string{"--base-url", "http://127.0.0.1:8080"}
	ok := slices.Concat(base, []string{"--admin-password-file", pw, "--out-dir", dir})
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"no base url", []string{"--admin-password-file", pw, "--out-dir", dir}, "--base-url"},
		{"relative base url", []string{"--base-url", "127.0.0.1:8080", "--admin-password-file", pw, "--out-dir", dir}, "--base-url"},
		{"no password", slices.Concat(base, []string{"--out-dir", dir}), "--admin-password-file"},
		{"missing password file", slices.Concat(base, []string{"--admin-password-file", filepath.Join(dir, "nope"), "--out-dir", dir}), "--admin-password-file"},
		{"empty password file", slices.Concat(base, []string{"--admin-password-file", empty, "--out-dir", dir}), "--admin-password-file"},
		{"no out dir", slices.Concat(base, []string{"--admin-password-file", pw}), "--out-dir"},
		{"zero users", append([]string{"--users", "0"}, ok...), "--users"},
		{"pattern without %d", append([]string{"--username", "user"}, ok...), "--username"},
		{"fractional lifespan", append([]string{"--access-token-lifespan", "1.5s"}, ok...), "--access-token-lifespan"},
		{"bad lifespan", append([]string{"--access-token-lifespan", "3600"}, ok...), "access-token-lifespan"},
		{"client id with a slash", append([]string{"--client-id", "a/b"}, ok...), "--client-id"},
		{"unknown flag", append([]string{"--bogus"}, ok...), "--bogus"},
		{"positional", append([]string{"extra"}, ok...), "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, context.Background(), append([]string{"keycloak"}, tt.args...)...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "provision keycloak: ") || !strings.Contains(stderr, tt.flag) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and an error naming %s", code, stdout, stderr, tt.flag)
			}
		})
	}
}

func TestKeycloakHelp(t *testing.T) {
	code, stdout, _ := runArgs(t, context.Background(), "keycloak", "--help")
	if code != 0 || !strings.Contains(stdout, "Usage: provision keycloak") || !strings.Contains(stdout, "mintpool --flow password") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
	for _, f := range []string{"--base-url", "--admin-user", "--admin-password-file", "--out-dir", "--realm", "--access-token-lifespan",
		"--client-id", "--redirect-uri", "--users", "--username", "-P,", "--request-timeout", "--version"} {
		if !strings.Contains(stdout, f) {
			t.Errorf("--help lacks %s", f)
		}
	}
}

// TestKeycloakAgainstFake runs the subcommand as the adapter does: exit 0
// with the summary on stdout and both secret files; a wrong admin password
// or a server that is down exits 1 naming the call, and writes no file.
func TestKeycloakAgainstFake(t *testing.T) {
	f := keycloaktest.NewFake(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "secrets")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	args := func(pw string) []string {
		return []string{"keycloak", "--base-url", f.URL, "--admin-password-file", writeSecretFile(t, dir, "admin", pw+"\n"),
			"--out-dir", out, "--users", "3", "--access-token-lifespan", "3600s"}
	}

	code, stdout, stderr := runArgs(t, context.Background(), args("wrong")...)
	const login = "provision keycloak: admin login as admin (POST /realms/master/protocol/openid-connect/token): "
	if code != 1 || stdout != "" || !strings.Contains(stderr, login+"HTTP 400: invalid_grant") {
		t.Errorf("wrong password: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("%d files after a failure", len(ents))
	}

	code, stdout, stderr = runArgs(t, context.Background(), args(f.AdminPassword)...)
	var sum keycloak.Summary
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil || sum.Users.Count != 3 || sum.AccessTokenLifespanSec != 3600 ||
		sum.Client.SecretFile != filepath.Join(out, "bench-svc") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, f.AdminPassword) {
		t.Error("the admin password was printed")
	}
	secret, err := os.ReadFile(sum.Client.SecretFile)
	if err != nil || strings.TrimSpace(string(secret)) != f.Realm("bench").Clients[sum.Client.ID].Rep.Secret {
		t.Errorf("client secret file: %v", err)
	}
	if _, err := os.Stat(sum.Users.PasswordFile); err != nil {
		t.Error(err)
	}

	f.Close()
	code, _, stderr = runArgs(t, context.Background(), args(f.AdminPassword)...)
	if code != 1 || !strings.Contains(stderr, login) || !strings.Contains(stderr, "connection refused") {
		t.Errorf("server down: exit %d, stderr %q", code, stderr)
	}
}
