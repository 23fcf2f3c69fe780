package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"docker-args", "--pod", "p.json"}, "--pod, --secret and --dir are required"},
		{[]string{"nginx-conf", "--dir", "d"}, "--dir and --port are required"},
		{[]string{"pause", "extra"}, "unknown argument: extra"},
	} {
		code, stdout, stderr := runArgs(c.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("podrun %q: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestDockerArgsCommand: the arguments come out NUL-terminated, one each,
// and a pod that cannot run as the kubelet would is exit 1, named.
func TestDockerArgsCommand(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"metadata": {"name": "idpbench-agent"}, "data": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runArgs("docker-args", "--pod", "testdata/agent-pod.json", "--secret", secret,
		"--dir", filepath.Join(dir, "volumes"), "--network", "container:sb")
	args := strings.Split(strings.TrimSuffix(stdout, "\x00"), "\x00")
	if code != 0 || len(args) < 10 || args[0] != "--detach" || !strings.HasSuffix(stdout, "\x00") {
		t.Fatalf("exit %d, %d arguments %q, stderr %q; want exit 0 and NUL-terminated arguments from --detach on", code, len(args), args, stderr)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"metadata": {"name": "other"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runArgs("docker-args", "--pod", "testdata/agent-pod.json", "--secret", other, "--dir", dir)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "podrun docker-args: ") || !strings.Contains(stderr, "but the Secret given is other") {
		t.Errorf("another Secret: exit %d, stdout %q, stderr %q; want exit 1 naming it", code, stdout, stderr)
	}
}
