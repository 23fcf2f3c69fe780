package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// provisionRun runs provision in process: exit code, stdout, stderr.
func provisionRun(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

const hydraCompose = "../../products/hydra/compose.yml"

// TestComposePlacement: every service of the file, in its order, gets the
// CPUs as its cpuset (the text compose.sh wrote before); an empty --cpus
// removes the override; a list that is not one is a usage error, nothing
// written.
func TestComposePlacement(t *testing.T) {
	out := filepath.Join(t.TempDir(), "compose.placement.yml")
	if code, _, stderr := provisionRun("compose", "placement", "--cpus", "0-2", hydraCompose, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "# idpbench placement: the server CPUs for every service (IDPBENCH_SERVER_CPUS)\nservices:\n" +
		"  postgres:\n    cpuset: \"0-2\"\n  hydra-migrate:\n    cpuset: \"0-2\"\n  hydra:\n    cpuset: \"0-2\"\n"
	if b, err := os.ReadFile(out); err != nil || string(b) != want {
		t.Fatalf("override = %q (%v), want %q", b, err, want)
	}
	if code, _, stderr := provisionRun("compose", "placement", "--cpus", "", hydraCompose, "-o", out); code != 0 {
		t.Fatalf("empty --cpus: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("empty --cpus left %s (%v)", out, err)
	}
	if code, _, stderr := provisionRun("compose", "placement", "--cpus", "0-2\"\n  x", hydraCompose, "-o", out); code != 2 ||
		!strings.Contains(stderr, "not a CPU list") {
		t.Errorf("a bad --cpus: exit %d, stderr %q; want 2, not a CPU list", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a bad --cpus wrote %s (%v)", out, err)
	}
}

// TestComposeLimits: the limits in the file's order, extends resolved (the
// postgres service's limit is compose.postgres.yml's); "none" for a service
// without one; an unknown key fails the load.
func TestComposeLimits(t *testing.T) {
	code, stdout, stderr := provisionRun("compose", "limits", hydraCompose)
	if want := "postgres 2G, hydra-migrate 2G, hydra 2G\n"; code != 0 || stdout != want {
		t.Errorf("limits = %d %q %q, want 0 %q", code, stdout, stderr, want)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("services:\n  b:\n    image: x:1.0\n  a:\n    image: y:1.0\n    mem_limit: 1G\n")
	if code, stdout, _ := provisionRun("compose", "limits", file); code != 0 || stdout != "b none, a 1G\n" {
		t.Errorf("limits = %d %q, want 0 %q", code, stdout, "b none, a 1G\n")
	}
	write("services:\n  a:\n    image: x:1.0\n    memory: 1G\n")
	if code, _, stderr := provisionRun("compose", "limits", file); code != 1 || !strings.Contains(stderr, "memory") {
		t.Errorf("an unknown key: exit %d, stderr %q; want 1 naming it", code, stderr)
	}
}
