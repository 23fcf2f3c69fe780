package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
)

// placementOn runs "provision placement ARGS..." with the variables vars
// on a host whose usable CPUs are allowed ("": unreadable).
func placementOn(t *testing.T, vars map[string]string, allowed string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := placementCmd{
		getenv: func(k string) string { return vars[k] },
		allowed: func() (placement.Set, error) {
			if allowed == "" {
				return placement.Set{}, errors.New("reading the CPUs this process may use: no /proc")
			}
			return placement.Parse(allowed)
		},
	}
	var out, errb strings.Builder
	err := c.run(context.Background(), args, env{Stdout: &out, Stderr: &errb})
	return cli.Done(&errb, "provision placement", err), out.String(), errb.String()
}

// TestPlacement: the variables a shell exports, in their order, and
// provision meta's flags; a bad placement exits 2 saying why in the flags
// of run-comparison.sh, without pointing at provision's --help.
func TestPlacement(t *testing.T) {
	lines := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	for _, tt := range []struct {
		name    string
		vars    map[string]string
		allowed string
		args    []string
		code    int
		stdout  string
		stderr  string
	}{
		{"default on 4", nil, "0-3", nil, 0, lines("IDPBENCH_DRIVER_CPUS=3", "IDPBENCH_SERVER_CPUS=0-2",
			"IDPBENCH_PLACEMENT=pinned", "IDPBENCH_PLACEMENT_REASON=", "IDPBENCH_HOST_CPUS=4"), ""},
		{"default on 2", nil, "0-1", []string{"--format", "env"}, 0, lines("IDPBENCH_DRIVER_CPUS=", "IDPBENCH_SERVER_CPUS=",
			"IDPBENCH_PLACEMENT=shared", "IDPBENCH_PLACEMENT_REASON=2 CPUs: fewer than 4, driver and server share them",
			"IDPBENCH_HOST_CPUS=2"), ""},
		{"no pin", map[string]string{"IDPBENCH_PIN": "0"}, "0-7", nil, 0, lines("IDPBENCH_DRIVER_CPUS=", "IDPBENCH_SERVER_CPUS=",
			"IDPBENCH_PLACEMENT=shared", "IDPBENCH_PLACEMENT_REASON=pinning turned off (--no-pin, IDPBENCH_PIN=0): driver and server share 8 CPUs",
			"IDPBENCH_HOST_CPUS=8"), ""},
		{"given", map[string]string{"IDPBENCH_DRIVER_CPUS": "7,6", "IDPBENCH_SERVER_CPUS": "0-3"}, "0-7", nil, 0,
			lines("IDPBENCH_DRIVER_CPUS=6-7", "IDPBENCH_SERVER_CPUS=0-3", "IDPBENCH_PLACEMENT=pinned", "IDPBENCH_PLACEMENT_REASON=",
				"IDPBENCH_HOST_CPUS=8"), ""},
		{"meta pinned", map[string]string{"IDPBENCH_DRIVER_CPUS": "1", "IDPBENCH_SERVER_CPUS": "0"}, "0-1", []string{"--format", "meta"}, 0,
			lines("--placement-mode", "pinned", "--driver-cpus", "1", "--server-cpus", "0", "--host-cpus", "2"), ""},
		{"meta shared", nil, "0-1", []string{"--format=meta"}, 0,
			lines("--placement-mode", "shared", "--driver-cpus", "0-1", "--server-cpus", "0-1", "--host-cpus", "2",
				"--placement-reason", "2 CPUs: fewer than 4, driver and server share them"), ""},

		{"overlap", map[string]string{"IDPBENCH_DRIVER_CPUS": "1", "IDPBENCH_SERVER_CPUS": "0-1"}, "0-1", nil, 2, "",
			"provision placement: --driver-cpus (1) and --server-cpus (0-1) overlap on CPUs 1: the sets must be disjoint\n"},
		{"outside, meta", map[string]string{"IDPBENCH_DRIVER_CPUS": "2", "IDPBENCH_SERVER_CPUS": "0"}, "0-1", []string{"--format", "meta"}, 2, "",
			"provision placement: --driver-cpus (IDPBENCH_DRIVER_CPUS) \"2\": CPU 2 is not one this process may use (0-1)\n"},
		{"one without the other", map[string]string{"IDPBENCH_SERVER_CPUS": "0"}, "0-1", nil, 2, "",
			"provision placement: --server-cpus (IDPBENCH_SERVER_CPUS) needs --driver-cpus (IDPBENCH_DRIVER_CPUS) too: give both or neither\n"},
		{"unreadable", nil, "", nil, 1, "", "provision placement: reading the CPUs this process may use: no /proc\n"},
		{"bad format", nil, "0-1", []string{"--format", "json"}, 2, "",
			"provision placement: --format \"json\": want env or meta\nTry 'provision placement --help'.\n"},
		{"an argument", nil, "0-1", []string{"meta"}, 2, "",
			"provision placement: unexpected argument \"meta\" (provision placement takes flags only)\nTry 'provision placement --help'.\n"},
	} {
		code, stdout, stderr := placementOn(t, tt.vars, tt.allowed, tt.args...)
		if code != tt.code || stdout != tt.stdout || stderr != tt.stderr {
			t.Errorf("%s: exit %d\nstdout %q\nstderr %q\nwant %d\nstdout %q\nstderr %q", tt.name, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}

// TestPlacementHere: on this process's CPUs with no placement asked, the
// six variables in their order; --help explains and shows an example.
func TestPlacementHere(t *testing.T) {
	for _, k := range []string{"IDPBENCH_PIN", "IDPBENCH_DRIVER_CPUS", "IDPBENCH_SERVER_CPUS"} {
		t.Setenv(k, "")
	}
	code, stdout, stderr := runArgs(t, context.Background(), "placement")
	got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{"IDPBENCH_DRIVER_CPUS", "IDPBENCH_SERVER_CPUS", "IDPBENCH_PLACEMENT", "IDPBENCH_PLACEMENT_REASON", "IDPBENCH_HOST_CPUS"}
	if code != 0 || stderr != "" || len(got) != len(want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the %d variables", code, stdout, stderr, len(want))
	}
	for i, k := range want {
		if !strings.HasPrefix(got[i], k+"=") {
			t.Errorf("line %d is %q, want %s=...", i+1, got[i], k)
		}
	}
	code, stdout, _ = runArgs(t, context.Background(), "placement", "--help")
	for _, w := range []string{"Usage: provision placement", "--format", "IDPBENCH_HOST_CPUS", "Examples:", "provision placement --format meta"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Errorf("--help: exit %d, no %q in:\n%s", code, w, stdout)
		}
	}
}
