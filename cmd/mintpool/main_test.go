package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadFlags(t *testing.T) {
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	t.Setenv("IDPBENCH_PASSWORD", "")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	cc := []string{"--flow", "client_credentials", "--token-url", "http://127.0.0.1:1/token", "--client-id", "c", "--client-secret-file", secret}
	tests := []struct {
		name string
		args []string
		flag string // the error must name it
	}{
		{"no flow", nil, "--flow"},
		{"unknown flow", []string{"--flow", "implicit"}, "--flow"},
		{"keycloak-login, removed", append([]string{"--flow", "keycloak-login", "--issuer", "http://h", "--username", "u"}, cc[2:]...), "--flow"},
		{"zitadel without login client", append([]string{"--flow", "session-api", "--issuer", "http://h", "--username", "u"}, cc[2:]...), "--login-client"},
		{"unknown flag", []string{"--flow", "client_credentials", "--bogus"}, "--bogus"},
		{"bad count", append([]string{"-n", "x"}, cc...), "count"},
		{"zero count", append([]string{"-n", "0"}, cc...), "-n"},
		{"zero parallel", append([]string{"-P", "0"}, cc...), "-P"},
		{"bad emit", append([]string{"--emit", "code"}, cc...), "--emit"},
		{"bad client auth", append([]string{"--client-auth", "jwt"}, cc...), "--client-auth"},
		{"bad timeout", append([]string{"--timeout", "soon"}, cc...), "timeout"},
		{"zero max failures", append([]string{"--max-failures", "0"}, cc...), "--max-failures"},
		{"no endpoint", []string{"--flow", "client_credentials", "--client-id", "c", "--client-secret-file", secret}, "--token-url"},
		{"relative url", []string{"--flow", "client_credentials", "--token-url", "/token", "--client-id", "c", "--client-secret-file", secret}, "--token-url"},
		{"no client id", []string{"--flow", "client_credentials", "--token-url", "http://h/t", "--client-secret-file", secret}, "--client-id"},
		{"no secret", []string{"--flow", "client_credentials", "--token-url", "http://h/t", "--client-id", "c"}, "--client-secret-file"},
		{"missing secret file", []string{"--flow", "client_credentials", "--token-url", "http://h/t", "--client-id", "c", "--client-secret-file", "/nonexistent/s"}, "--client-secret-file"},
		{"password without user", append([]string{"--flow", "password"}, cc[2:]...), "--username"},
		{"password without password", append([]string{"--flow", "password", "--username", "u"}, cc[2:]...), "--password-file"},
		{"hydra without admin", append([]string{"--flow", "admin-accept", "--auth-url", "http://h/a"}, cc[2:]...), "--admin-url"},
		{"hydra without auth url", append([]string{"--flow", "admin-accept", "--admin-url", "http://h:4445"}, cc[2:]...), "--auth-url"},
		{"jwt without key", []string{"--flow", "jwt-bearer", "--aud", "a"}, "--key-file"},
		{"jwt without aud", []string{"--flow", "client-assertion", "--key-file", secret}, "--aud"},
		{"jwt zero ttl", []string{"--flow", "jwt-bearer", "--key-file", secret, "--aud", "a", "--ttl", "0s"}, "--ttl"},
		{"positional", append([]string{"extra"}, cc...), "extra"},
		{"login consent for client_credentials", append([]string{"--login-consent"}, cc...), "--login-consent"},
		{"login field without =", append([]string{"--login-field", "tenant"}, cc...), "--login-field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.HasPrefix(stderr, "mintpool: ") || !strings.Contains(stderr, tt.flag) {
				t.Errorf("stderr %q does not name %s", stderr, tt.flag)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := runArgs(t, "--help")
	if code != 0 || !strings.Contains(stdout, "--flow") || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "loadstep --url") {
		t.Errorf("--help: exit %d, output %q", code, stdout)
	}
	for _, flag := range []string{"--token-url", "--issuer", "--auth-url", "--admin-url", "--redirect-uri", "--client-id", "--client-secret-file",
		"--client-auth", "--scope", "--username", "--users", "--password-file", "--subject", "--key-file", "--kid", "--iss", "--sub", "--aud",
		"--login-client", "--login-client-pat-file",
		"--ttl", "-n,", "-P,", "--emit", "--max-failures", "--timeout", "--product", "-o,", "--version"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
	code, stdout, _ = runArgs(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "mintpool ") {
		t.Errorf("--version: exit %d, output %q", code, stdout)
	}
}

func TestRunEndToEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if id, sec, ok := r.BasicAuth(); !ok || id != "c" || sec != "s3cret" || r.PostForm.Get("scope") != "" {
			w.WriteHeader(401)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "Client authentication failed."})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "expires_in": 60})
	}))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "at.pool")
	t.Setenv("IDPBENCH_CLIENT_SECRET", "s3cret")
	args := []string{"--flow", "client_credentials", "--token-url", srv.URL, "--client-id", "c", "-n", "5", "-P", "2", "--product", "x", "-o", out}
	code, stdout, stderr := runArgs(t, args...)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "mintpool: minted 5 access_token") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	data, _ := os.ReadFile(out)
	if !strings.HasPrefix(string(data), "# idpbench-pool kind=access_token") || strings.Count(string(data), "tok\n") != 5 {
		t.Errorf("pool = %q", data)
	}

	t.Setenv("IDPBENCH_CLIENT_SECRET", "wrong")
	os.Remove(out)
	code, _, stderr = runArgs(t, args...)
	if code != 1 || !strings.Contains(stderr, "Client authentication failed.") || strings.Contains(stderr, "wrong") {
		t.Errorf("wrong secret: exit %d stderr %q", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left after failure: %v", ents)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e strings.Builder
	t.Setenv("IDPBENCH_CLIENT_SECRET", "s3cret")
	if code := run(ctx, args, nil, &o, &e); code != 130 {
		t.Errorf("cancelled: exit %d, want 130 (stderr %q)", code, e.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left after interrupt: %v", ents)
	}
}
