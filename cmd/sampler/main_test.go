package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
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
	t.Setenv("IDPBENCH_PG_DSN", "")
	tests := []struct {
		name string
		args []string
		flag string // the error must name it
	}{
		{"unknown flag", []string{"--bogus"}, "--bogus"},
		{"bad every", []string{"--every", "soon"}, "every"},
		{"zero every", []string{"--every", "0s"}, "--every"},
		{"negative duration", []string{"--duration", "-1s"}, "--duration"},
		{"too many names", []string{"--pid", "1", "--name", "a", "--name", "b"}, "--name"},
		{"password in argv", []string{"--postgres", "postgres://u:pw@127.0.0.1/db"}, "--postgres"},
		{"bad regex", []string{"--match", "("}, "--match"},
		{"bad glob", []string{"--docker", "["}, "--docker"},
		{"nothing", []string{"--host=false"}, "nothing to sample"},
		{"positional", []string{"extra"}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.HasPrefix(stderr, "sampler: ") || !strings.Contains(stderr, tt.flag) || strings.Count(stderr, "sampler: ") != 1 {
				t.Errorf("stderr %q does not name %s once", stderr, tt.flag)
			}
			if strings.Contains(stderr, "pw@") {
				t.Errorf("stderr %q repeats the password", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := runArgs(t, "--help")
	if code != 0 || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "sampler --pidfile") {
		t.Errorf("--help: exit %d, output %q", code, stdout)
	}
	for _, flag := range []string{"--pid N", "--pidfile FILE", "--match REGEX", "--name NAME", "--docker GLOB", "--postgres DSN", "--pg-all-databases",
		"--pg-reset", "--every duration", "(default 1s)", "--duration", "--until-stdin-eof", "--pss-every", "--host", "--self-cpu", "-o, --output FILE", "--version"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
	code, stdout, _ = runArgs(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "sampler ") {
		t.Errorf("--version: exit %d, output %q", code, stdout)
	}
}

// TestNamesPairInOrder checks that --name pairs with the selectors in the
// order given, whatever their kind.
func TestNamesPairInOrder(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "self.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644)
	out := filepath.Join(dir, "s.jsonl")
	self := strconv.Itoa(os.Getpid())
	code, _, stderr := runArgs(t, "--pidfile", pidfile, "--pid", self, "--name", "first", "--name", "second",
		"--every", "50ms", "--duration", "160ms", "--host=false", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, _ := os.Open(out)
	defer f.Close()
	recs, err := schema.DecodeSamples(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 4 || recs[0].Source != "process:first" || recs[1].Source != "process:second" {
		t.Errorf("records %+v, want process:first then process:second", recs)
	}
}
