package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb strings.Builder
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadFlags(t *testing.T) {
	t.Setenv("IDPBENCH_CLIENT_SECRET", "")
	dir := t.TempDir()
	badPid, goodPid := filepath.Join(dir, "bad.pid"), filepath.Join(dir, "good.pid")
	writeFile(t, badPid, "x\n")
	writeFile(t, goodPid, fmt.Sprintf("%d\n", syscall.Getpgrp()))
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"no product", nil, "--product"},
		{"unknown product", []string{"--product", "zitadel"}, "--product"},
		{"bad metrics url", []string{"--product", "keycloak", "--metrics", "localhost:9000"}, "--metrics"},
		{"token url without a secret", []string{"--product", "refop", "--binary", "x", "--token-url", "http://x/t", "--client-id", "c"}, "--client-secret-file"},
		{"missing secret file", []string{"--product", "refop", "--client-secret-file", filepath.Join(dir, "nope")}, "--client-secret-file"},
		{"hydra without admin url", []string{"--product", "hydra"}, "--admin-url"},
		{"refop without binary", []string{"--product", "refop"}, "--binary"},
		{"positional", []string{"--product", "refop", "extra"}, "extra"},
		{"listeners without a pidfile", []string{"--product", "oidc", "--listeners", filepath.Join(dir, "nope")}, "--listeners"},
		{"listeners with a bad pidfile", []string{"--product", "oidc", "--listeners", badPid}, "is not a pid"},
		{"listeners and another source", []string{"--product", "refop", "--listeners", goodPid, "--binary", "x"}, "--listeners"},
		{"listeners without a product", []string{"--listeners", goodPid}, "--product"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(tt.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "readback: ") || !strings.Contains(stderr, tt.flag) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and an error naming %s", code, stdout, stderr, tt.flag)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runArgs("--help")
	if code != 0 || !strings.Contains(stdout, "--want-version") || !strings.Contains(stdout, "Example") {
		t.Errorf("exit %d, help %q", code, stdout)
	}
}

// TestOutputOnlyWhenRead: a failed read writes no file; a good one writes
// the record, without the secret.
func TestOutputOnlyWhenRead(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, pw, _ := req.BasicAuth(); pw != "s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"a.b.c","expires_in":60}`))
	}))
	t.Cleanup(srv.Close)
	out := filepath.Join(dir, "facts.json")
	// The reference OP's binary is not this test's: its module is missing.
	code, stdout, stderr := runArgs("--product", "refop", "--binary", os.Args[0], "--token-url", srv.URL,
		"--client-id", "c", "--client-secret-file", secret, "-o", out)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "github.com/zitadel/oidc/v3") {
		t.Errorf("exit %d, stderr %q; want 1 naming the missing module", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written after a failed read (%v)", out, err)
	}
	// A product answering errors: a failure naming the call, no output, no secret.
	code, stdout, stderr = runArgs("--product", "hydra", "--admin-url", srv.URL, "--token-url", srv.URL,
		"--client-id", "c", "--client-secret-file", secret)
	if code == 0 || stdout != "" {
		t.Errorf("hydra against a token endpoint only: exit %d, stdout %q, stderr %q; want a failure and no output", code, stdout, stderr)
	}
	if strings.Contains(stderr, "s3cret") {
		t.Errorf("stderr holds the secret: %q", stderr)
	}
}

func writeFile(t *testing.T, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestListenersBeyondLoopback: a listener of this process's group on every
// interface fails the read, naming it, and nothing is written.
func TestListenersBeyondLoopback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the Linux proc filesystem")
	}
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	pidfile, out := filepath.Join(dir, "p.pid"), filepath.Join(dir, "listeners.json")
	writeFile(t, pidfile, fmt.Sprintf("%d\n", syscall.Getpgrp()))
	reason := filepath.Join(dir, "reason")
	t.Setenv("IDPBENCH_REASON_FILE", reason)
	code, stdout, stderr := runArgs("--product", "oidc", "--listeners", pidfile, "-o", out)
	want := fmt.Sprintf("0.0.0.0:%d (pid %d ", l.Addr().(*net.TCPAddr).Port, os.Getpid())
	if code != 1 || stdout != "" || !strings.Contains(stderr, "oidc listens beyond loopback") || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 naming %s", code, stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written after a failed read (%v)", out, err)
	}
	// The reason a run's N/A row gives (the run tool's IDPBENCH_REASON_FILE).
	if b, err := os.ReadFile(reason); err != nil || !strings.HasPrefix(string(b), "oidc listens beyond loopback") || !strings.Contains(string(b), want) {
		t.Errorf("reason file: %q, %v; want the socket beyond loopback", b, err)
	}
}

// TestListenersLoopback: a group listening on loopback only is read, and
// the line readback logs names its sockets.
func TestListenersLoopback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the Linux proc filesystem")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	pidfile, out := filepath.Join(dir, "p.pid"), filepath.Join(dir, "listeners.json")
	writeFile(t, pidfile, fmt.Sprintf("%d\n", syscall.Getpgrp()))
	code, _, stderr := runArgs("--product", "oidc", "--listeners", pidfile, "-o", out)
	want := fmt.Sprintf("readback: oidc listens on loopback only: 127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and a line with %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("%s not written (%v)", out, err)
	}
}
