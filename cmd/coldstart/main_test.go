package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadFlags(t *testing.T) {
	ready := []string{"--ready", "http://127.0.0.1:1/ready"}
	tests := []struct {
		name string
		args []string
		flag string // the error must name it
	}{
		{"no ready", []string{"--", "true"}, "--ready"},
		{"no command", ready, "command"},
		{"unknown flag", append([]string{"--bogus"}, ready...), "--bogus"},
		{"bad status", append([]string{"--ready-status", "9"}, append(ready, "--", "true")...), "--ready-status"},
		{"bad timeout", append([]string{"--timeout", "0s"}, append(ready, "--", "true")...), "--timeout"},
		{"bad poll", append([]string{"--poll", "x"}, append(ready, "--", "true")...), "poll"},
		{"bad mode", append([]string{"--mode", "C"}, append(ready, "--", "true")...), "--mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.HasPrefix(stderr, "coldstart: ") || !strings.Contains(stderr, tt.flag) {
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
	if code != 0 || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "coldstart --ready") || !strings.Contains(stdout, "environment") {
		t.Errorf("--help: exit %d, output %q", code, stdout)
	}
	for _, flag := range []string{"--ready URL", "--ready-status STATUS", "(default 200)", "(default 5m0s)", "(default 100ms)", "--mode",
		"--product", "--product-version", "--pidfile", "--stop", "--stop-grace", "(default 10s)", "--log", "-o, --output FILE", "--version"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
	code, stdout, _ = runArgs(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "coldstart ") {
		t.Errorf("--version: exit %d, output %q", code, stdout)
	}
}

// TestEarlyExit runs a command that fails before it is ready: exit 1, and
// the record says why. The command follows the flags without "--" too.
func TestEarlyExit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cs.json")
	log := filepath.Join(dir, "product.log")
	code, _, stderr := runArgs(t, "--ready", "http://127.0.0.1:1/ready", "--product", "p", "--log", log, "-o", out,
		"/bin/sh", "-c", "echo cannot open config >&2; exit 7")
	if code != 1 {
		t.Errorf("exit %d, want 1 (stderr %q)", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := schema.DecodeColdstart(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != "error" || !strings.Contains(rec.Error, "exit status 7") || !strings.Contains(rec.Error, "cannot open config") ||
		len(rec.Command) != 3 || rec.Command[0] != "/bin/sh" {
		t.Errorf("record %+v", rec)
	}
}
