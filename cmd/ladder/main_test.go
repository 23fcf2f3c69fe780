package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func runLadder(args []string, env map[string]string) (int, string, string) {
	var stdout, stderr strings.Builder
	code := run(context.Background(), args, &stdout, &stderr, func(k string) string { return env[k] }, nil)
	return code, stdout.String(), stderr.String()
}

func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no scenario", []string{"refop", "--run-dir", "r", "--state-dir", "s"}, nil, "want PRODUCT SCENARIO, got 1 arguments"},
		{"three positionals", []string{"refop", "userinfo", "more"}, nil, "want PRODUCT SCENARIO, got 3 arguments"},
		{"an unknown flag", []string{"refop", "userinfo", "--fast"}, nil, "unknown flag: --fast"},
		{"no state dir", []string{"refop", "userinfo", "--run-dir", "r"}, nil, "RUN_DIR and STATE_DIR"},
		{"an unknown product", []string{"nosuch", "userinfo", "--run-dir", "r", "--state-dir", "s"}, nil, `unknown product "nosuch" (want example, hydra, `},
		{"a bad round", []string{"--round", "2", "refop", "userinfo", "--run-dir", "r", "--state-dir", "s"}, nil,
			"IDPBENCH_ROUND (--round) 2: want a whole number from 1 to the repeats (1)"},
	} {
		code, _, stderr := runLadder(tt.args, tt.env)
		if code != 2 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "Try 'ladder --help'") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tt.name, code, stderr, tt.want)
		}
	}
}

// TestPositionalsAfterFlags: flags before and after the positionals, the
// directories from the environment; it gets as far as the adapter.
func TestPositionalsAfterFlags(t *testing.T) {
	env := map[string]string{"RUN_DIR": t.TempDir(), "STATE_DIR": t.TempDir(), "IDPBENCH_ROOT": t.TempDir()}
	for _, args := range [][]string{{"--quick", "refop", "userinfo"}, {"refop", "--quick", "userinfo"}, {"refop", "userinfo", "--quick"}} {
		code, _, stderr := runLadder(args, env)
		want := "ladder: no adapter " + filepath.Join(env["IDPBENCH_ROOT"], "products", "refop", "adapter")
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 1, %q", args, code, stderr, want)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runLadder([]string{"--help"}, nil)
	for _, want := range []string{"Usage: ladder PRODUCT SCENARIO", "--repeats N", "--step-total T", "IDPBENCH_WARMUP_JIT_MAX_PCT",
		"4 the product stopped answering", "scripts/ladder.sh refop userinfo --quick"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--help: exit %d, lacks %q", code, want)
		}
	}
}
