package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestUsage: a missing flag or an argument is a usage error (exit 2) that
// names it, with nothing on stdout.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "a subcommand is required"},
		{[]string{"nginx-conf", "--dir", "d"}, "--dir and --port are required"},
		{[]string{"pause", "extra"}, "unknown argument: extra"},
	} {
		code, stdout, stderr := runArgs(c.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("podrun %q: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestNginxConf: nginx's config listens on 127.0.0.1:PORT only, logs to
// the access log given, and serves the discovery document.
func TestNginxConf(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runArgs("nginx-conf", "--dir", dir, "--port", "18080", "--access-log", filepath.Join(dir, "access.log"))
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0, nothing on stdout", code, stdout, stderr)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"listen 127.0.0.1:18080;", "access_log " + filepath.Join(dir, "access.log") + ";"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "html", ".well-known", "openid-configuration")); err != nil {
		t.Errorf("no discovery document: %v", err)
	}
}

// TestPause: pause runs until its context ends (SIGTERM or SIGINT through
// cli.SignalContext), then exits 0.
func TestPause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- run(ctx, []string{"pause"}, &stdout, &stderr)
	}()
	select {
	case code := <-done:
		t.Fatalf("pause ended by itself (exit %d)", code)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("pause after its context ended: exit %d, want 0", code)
	}
}
