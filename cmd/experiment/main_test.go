package main

import (
	"context"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/experiment"
)

func runArgs(args ...string) (int, string, string) {
	var out, errb strings.Builder
	// No IDPBENCH_ROOT/BIN: a command line that got past its flags would fail with exit 1.
	e := experiment.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
	code := run(context.Background(), args, e)
	return code, out.String(), errb.String()
}

// TestUsage: a bad command line exits 2 naming the flag or argument.
func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "a subcommand is required: warmup-check, false-alarms, invocations"},
		{[]string{"invocations", "--invocations", "1"}, "experiment invocations: --invocations wants 2 or more (got 1)"},
		{[]string{"invocations", "--products", ""}, "--products wants product names"},
		{[]string{"warmup"}, `unknown subcommand "warmup"`},
		{[]string{"warmup-check", "--fixed", "0"}, "experiment warmup-check: --fixed wants whole seconds (got 0)"},
		{[]string{"warmup-check", "--fixed", "1.5"}, `invalid argument "1.5" for "--fixed"`},
		{[]string{"warmup-check", "--repeats", "-1"}, "--repeats wants a positive number (got -1)"},
		{[]string{"warmup-check", "--product", ""}, "--product wants a product name"},
		{[]string{"warmup-check", "--pairs", "3"}, "unknown flag: --pairs"},
		{[]string{"false-alarms", "--pairs", "0"}, "experiment false-alarms: --pairs wants a positive number (got 0)"},
		{[]string{"false-alarms", "--repeats", "x"}, `invalid argument "x" for "--repeats"`},
		{[]string{"false-alarms", "--out"}, "flag needs an argument: --out"},
		{[]string{"false-alarms", "results/x"}, "unknown argument: results/x (flags only)"},
	}
	for _, tt := range tests {
		code, _, stderr := runArgs(tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "--help") {
			t.Errorf("experiment %q: exit %d, stderr %q; want 2, %q and a pointer to --help", tt.args, code, stderr, tt.want)
		}
	}
}

// TestHelp: each --help goes to stdout with exit 0, the defaults in it.
func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"Usage: experiment SUBCOMMAND", "warmup-check", "false-alarms"}},
		{[]string{"warmup-check", "--help"}, []string{"scripts/warmup-check.sh", `the PRODUCT to run (default "keycloak")`, "--fixed SECONDS", "(default 60)", "(default 4)"}},
		{[]string{"false-alarms", "-h"}, []string{"scripts/false-alarms.sh", "--pairs N", "N pairs of runs (default 5)", "R windows per ladder step (default 5)"}},
		{[]string{"invocations", "--help"}, []string{"scripts/invocation-pilot.sh", `(default [refop,hydra,keycloak])`, "K fresh invocations (runs) (default 4)"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(tt.args...)
		for _, w := range tt.want {
			if code != 0 || stderr != "" || !strings.Contains(stdout, w) {
				t.Errorf("experiment %q: exit %d, stderr %q; stdout lacks %q:\n%s", tt.args, code, stderr, w, stdout)
			}
		}
	}
}

// TestNoEnvironment: run outside its scripts, a valid command line fails
// (exit 1) saying what is missing, before running anything.
func TestNoEnvironment(t *testing.T) {
	code, _, stderr := runArgs("false-alarms", "--out", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "IDPBENCH_ROOT and IDPBENCH_BIN are not set") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
