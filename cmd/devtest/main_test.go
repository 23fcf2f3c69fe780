package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func runArgs(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestUsage: a bad command line is one line naming the flag or argument,
// then the hint at the --help that explains it, exit 2; nothing runs.
func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "devtest: error: a subcommand is required: fuzz, busy, static"},
		{[]string{"fuzzz"}, `devtest: error: unknown subcommand "fuzzz"`},
		{[]string{"fuzz", "--bogus"}, "fuzz: error: unknown flag: --bogus"},
		{[]string{"fuzz", "--time"}, "fuzz: error: flag needs an argument: --time"},
		{[]string{"fuzz", "--time", ""}, "fuzz: error: --time needs a duration (3s, 5m, 10000x)"},
		{[]string{"fuzz", "FuzzNoSuchTarget"}, "fuzz: error: no fuzz target FuzzNoSuchTarget (see --list)"},
		{[]string{"fuzz", "--root", "/", "--list"}, "fuzz: error: --root /: no go.mod of module github.com/idpbench/idpbench there"},
		{[]string{"busy", "--runs", "0"}, "test-busy: error: --runs wants a positive number"},
		{[]string{"busy", "--runs", "x"}, `test-busy: error: invalid argument "x" for "--runs"`},
		{[]string{"busy", "extra"}, "test-busy: error: unknown argument: extra"},
		{[]string{"static", "extra"}, "test: error: unknown argument: extra"},
		{[]string{"static", "--bogus"}, "test: error: unknown flag: --bogus"},
		{[]string{"static", "--root", "/"}, "test: error: --root /: no go.mod of module github.com/idpbench/idpbench there"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(tt.args...)
		hint := "Try 'devtest --help'.\n"
		if len(tt.args) > 0 && tt.args[0] != "fuzzz" {
			hint = "Try 'devtest " + tt.args[0] + " --help'.\n"
		}
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 2 || !strings.HasSuffix(stderr, hint) {
			t.Errorf("devtest %q: exit %d, stdout %q, stderr %q; want 2, the line %q and %q", tt.args, code, stdout, stderr, tt.want, hint)
		}
	}
}

// TestHelp: each --help goes to stdout with exit 0.
func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"Usage: devtest SUBCOMMAND", "fuzz", "busy", "static", "go run ./cmd/devtest static"}},
		{[]string{"fuzz", "--help"}, []string{"Usage: scripts/fuzz.sh [--time D] [--list] [TARGET...]", "golang/go#75804",
			"testdata/fuzz/FuzzXxx/", `(default "3s")`, "--list", "Examples:", "scripts/fuzz.sh --time 1m FuzzMember"}},
		{[]string{"busy", "-h"}, []string{"Usage: scripts/test-busy.sh [--runs N]", "runs in a row, N (default 5)", "Example:"}},
		{[]string{"static", "--help"}, []string{"Usage: devtest static [--root DIR]", "gofmt -l", "go vet ./...", "bash -n", "shellcheck -x",
			"--root DIR", "Examples:", "go run ./cmd/devtest static"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(tt.args...)
		for _, w := range tt.want {
			if code != 0 || stderr != "" || !strings.Contains(stdout, w) {
				t.Errorf("devtest %q: exit %d, stderr %q; stdout lacks %q:\n%s", tt.args, code, stderr, w, stdout)
			}
		}
	}
}

// TestListRepository: --list, run inside the repository, finds its targets.
func TestListRepository(t *testing.T) {
	code, stdout, stderr := runArgs("fuzz", "--list")
	for _, w := range []string{"./internal/load FuzzResponse\n", "./internal/schema FuzzDecodeStep\n"} {
		if code != 0 || stderr != "" || !strings.Contains(stdout, w) {
			t.Errorf("devtest fuzz --list: exit %d, stderr %q; stdout lacks %q:\n%s", code, stderr, w, stdout)
		}
	}
}

// TestStaticRepository: the repository itself passes its static checks with
// the real tools. It skips only without shellcheck (CI installs it; go,
// gofmt and bash are there wherever the tests run, and their absence fails).
func TestStaticRepository(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck is not installed (scripts/test.sh installs it as root)")
	}
	code, stdout, stderr := runArgs("static")
	for _, w := range []string{"test: [step 1/", "go vet ./... in products/refop/server", "test: ok: shellcheck ", ": nothing to report in the scripts\n", " static checks passed\n"} {
		if code != 0 || !strings.Contains(stderr, w) {
			t.Errorf("devtest static: exit %d, stdout %q; stderr lacks %q:\n%s", code, stdout, w, stderr)
		}
	}
}
