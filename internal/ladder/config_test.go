package ladder

import (
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/cli"
)

func TestNewConfig(t *testing.T) {
	base := Options{Product: "refop", Scenario: "userinfo", Where: Where{RunDir: "r", StateDir: "s", Bin: "b"}}
	root := map[string]string{"IDPBENCH_ROOT": "/repo"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"IDPBENCH_ROOT": "/repo"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	full, err := NewConfig(base, func(k string) string { return root[k] })
	if err != nil || full.Profile != "full" || !slices.Equal(full.Ladder, []int{4, 8, 16, 32, 64, 128}) ||
		full.WarmupS != 1 || full.WarmupMaxS != 8 || full.DurationS != 3 || full.SearchDurationS != 2 || full.KneeFlat != 1 ||
		full.WarmupStable != 2 || full.JITMaxPct != 0 || full.Repeats != 1 || full.Round != 0 ||
		full.ReuseMaxAgeS != -1 || full.Adapter != "/repo/products/refop/adapter" || full.Loadstep != "b/loadstep" {
		t.Errorf("the full profile's defaults: %+v, %v", full, err)
	}
	q := base
	q.Quick, q.Repeats, q.Round, q.FullLadder = true, "3", "2", true
	quick, err := NewConfig(q, func(k string) string { return with("IDPBENCH_REPEATS", "9", "RUN_DIR", "x")[k] })
	if err != nil || quick.Profile != "quick" || !slices.Equal(quick.Ladder, []int{2, 8, 32}) || quick.WarmMostS() != 5 ||
		quick.DurationS != 2 || quick.SearchDurationS != 3 || quick.KneeFlat != 2 || quick.Repeats != 3 || quick.Round != 2 || !quick.FullLadder || quick.RunDir != "r" {
		t.Errorf("quick, flags over the environment: %+v, %v", quick, err)
	}
	for _, tt := range []struct {
		name string
		o    Options
		env  map[string]string
		want string // the usage error
	}{
		{"no run dir", Options{Product: "p", Scenario: "s", Where: Where{StateDir: "s"}}, root, "RUN_DIR and STATE_DIR (or --run-dir/--state-dir) are required"},
		{"a bad ladder", base, with("IDPBENCH_LADDER", "2 x 8"), `IDPBENCH_LADDER "2 x 8": "x" is not a connection count`},
		{"no ladder", base, with("IDPBENCH_LADDER", " "), `IDPBENCH_LADDER " ": no connection count`},
		{"a zero duration", base, with("IDPBENCH_DURATION_S", "0"), "IDPBENCH_WARMUP_S 1, IDPBENCH_WARMUP_MAX_S 8, IDPBENCH_DURATION_S 0, IDPBENCH_SEARCH_DURATION_S 0: want whole seconds"},
		{"a zero search", base, with("IDPBENCH_SEARCH_DURATION_S", "0"), "IDPBENCH_WARMUP_S 1, IDPBENCH_WARMUP_MAX_S 8, IDPBENCH_DURATION_S 3, IDPBENCH_SEARCH_DURATION_S 0: want whole seconds"},
		{"a fractional warmup", base, with("IDPBENCH_WARMUP_S", "1.5"), "IDPBENCH_WARMUP_S 1.5, IDPBENCH_WARMUP_MAX_S 8, IDPBENCH_DURATION_S 3, IDPBENCH_SEARCH_DURATION_S 2: want whole seconds"},
		{"a bad JIT cap", base, with("IDPBENCH_WARMUP_JIT_MAX_PCT", "-1"), "IDPBENCH_WARMUP_JIT_MAX_PCT -1: want a whole percent"},
		{"zero repeats", base, with("IDPBENCH_REPEATS", "0"), "IDPBENCH_REPEATS (--repeats) 0: want a whole number >= 1"},
		{"a round beyond the repeats", base, with("IDPBENCH_REPEATS", "2", "IDPBENCH_ROUND", "3"), "IDPBENCH_ROUND (--round) 3: want a whole number from 1 to the repeats (2)"},
		{"a bad full ladder", base, with("IDPBENCH_FULL_LADDER", "yes"), "IDPBENCH_FULL_LADDER yes: want 0 or 1"},
		{"a bad reuse pool", base, with("IDPBENCH_REUSE_POOL", "0"), "IDPBENCH_REUSE_POOL 0: want a whole number >= 1"},
		{"a bad rate", base, with("IDPBENCH_CONSUME_PER_CONN_QPS", "0"), "IDPBENCH_CONSUME_PER_CONN_QPS 0: want a rate above 0"},
		{"a bad max age", base, with("IDPBENCH_REUSE_MAX_AGE_S", "2m"), "IDPBENCH_REUSE_MAX_AGE_S 2m: want whole seconds"},
		{"no root, no adapter", base, map[string]string{}, "IDPBENCH_ROOT is not set"},
	} {
		_, err := NewConfig(tt.o, func(k string) string { return tt.env[k] })
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want a usage error %q", tt.name, err, tt.want)
		}
	}
}

func TestBound(t *testing.T) {
	for _, tt := range []struct{ n, repeats, round, cands, want int }{
		{7, 1, 0, 0, 7},
		{7, 3, 0, 0, 13}, // 7 + 2 * 3
		{2, 3, 0, 0, 6},  // 2 + 2 * 2
		{7, 3, 1, 0, 7},
		{7, 3, 2, 2, 2},
		{7, 3, 3, 0, 0},
	} {
		if got := Bound(tt.n, tt.repeats, tt.round, tt.cands); got != tt.want {
			t.Errorf("Bound(%d, %d, %d, %d) = %d, want %d", tt.n, tt.repeats, tt.round, tt.cands, got, tt.want)
		}
	}
}

func TestPoolMode(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--client-id", "x"}, ""},
		{[]string{"--client-id", "x", "--pool-mode", "chain", "--scope", "openid"}, "chain"},
		{[]string{"--pool-mode"}, ""},
	} {
		if got := PoolMode(tt.args); got != tt.want {
			t.Errorf("PoolMode(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
