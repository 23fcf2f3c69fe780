package run

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/products"
)

var (
	fullShares  = ladder.ShareSettings{Shares: []int{50, 80}, ShareWindows: 1, ShareDurationS: 5, ShareWarmupS: 2, ShareWarmupMaxS: 15, ShareStable: 4}
	quickShares = ladder.ShareSettings{Shares: []int{50, 80}, ShareWindows: 1, ShareDurationS: 3, ShareWarmupS: 1, ShareWarmupMaxS: 4, ShareStable: 2}
)

func TestParse(t *testing.T) {
	day := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		args  []string
		env   map[string]string
		want  Options
		error string // "": none; "help"; else the usage message
	}{
		{name: "defaults", want: Options{Scenarios: strings.Fields(DefaultScenarios),
			RunID: "full-20261203", Profile: "full", Repeats: 40, LadderLen: 6, Env: []string{"IDPBENCH_REPEATS=40"}, BudgetS: 3540, Twins: []string{"refop", "keycloak"},
			Shares: fullShares}},
		{name: "quick", args: []string{"--quick", "--fresh", "--only", "refop,hydra", "--run-id", "q"},
			env: map[string]string{"IDPBENCH_SCENARIOS": "discovery userinfo", "IDPBENCH_LADDER": "2 8"},
			want: Options{Quick: true, Fresh: true, Products: []string{"refop", "hydra"}, Scenarios: []string{"discovery", "userinfo"},
				RunID: "q", Profile: "quick", Repeats: 2, LadderLen: 2, Twins: []string{"refop", "keycloak"},
				Shares: ladder.ShareSettings{Shares: []int{50, 80}, ShareWindows: 1, ShareDurationS: 3, ShareWarmupS: 1, ShareWarmupMaxS: 4, ShareStable: 2}}},
		{name: "flags export", args: []string{"--quick", "--repeats", "2", "--driver-cpus", "1", "--server-cpus", "0", "--no-pin", "--full-ladder"},
			want: Options{Quick: true, Scenarios: strings.Fields(DefaultScenarios), RunID: "quick", Profile: "quick",
				Repeats: 2, LadderLen: 3, Env: []string{"IDPBENCH_REPEATS=2", placement.EnvDriver + "=1", placement.EnvServer + "=0",
					placement.EnvPin + "=0", "IDPBENCH_FULL_LADDER=1"}, Twins: []string{"refop", "keycloak"}, Shares: quickShares}},
		{name: "env repeats, full", env: map[string]string{"IDPBENCH_REPEATS": "5"},
			want: Options{Scenarios: strings.Fields(DefaultScenarios), RunID: "full-20261203", Profile: "full", Repeats: 5, LadderLen: 6, BudgetS: 3540, Twins: []string{"refop", "keycloak"}, Shares: fullShares}},
		{name: "budget and twins from the environment", env: map[string]string{"IDPBENCH_BUDGET_S": "600", "IDPBENCH_AA": "hydra"},
			want: Options{Scenarios: strings.Fields(DefaultScenarios), RunID: "full-20261203", Profile: "full", Repeats: 40, LadderLen: 6,
				Env: []string{"IDPBENCH_REPEATS=40"}, BudgetS: 600, Twins: []string{"hydra"}, Shares: fullShares}},
		{name: "no twins", env: map[string]string{"IDPBENCH_AA": "none"},
			want: Options{Scenarios: strings.Fields(DefaultScenarios), RunID: "full-20261203", Profile: "full", Repeats: 40, LadderLen: 6,
				Env: []string{"IDPBENCH_REPEATS=40"}, BudgetS: 3540, Shares: fullShares}},
		{name: "shares from the environment", env: map[string]string{"IDPBENCH_SHARES": "none"},
			want: Options{Scenarios: strings.Fields(DefaultScenarios), RunID: "full-20261203", Profile: "full", Repeats: 40, LadderLen: 6,
				Env: []string{"IDPBENCH_REPEATS=40"}, BudgetS: 3540, Twins: []string{"refop", "keycloak"},
				Shares: ladder.ShareSettings{ShareWindows: 1, ShareDurationS: 5, ShareWarmupS: 2, ShareWarmupMaxS: 15, ShareStable: 4}}},
		{name: "bad share", env: map[string]string{"IDPBENCH_SHARES": "50 120"},
			error: `IDPBENCH_SHARES "50 120": "120" is not a percentage of the capacity (want whole numbers from 1 to 100, space-separated; none: no windows at shares)`},
		{name: "bad share windows", env: map[string]string{"IDPBENCH_SHARE_WINDOWS": "0"},
			error: "IDPBENCH_SHARE_WINDOWS 0, IDPBENCH_SHARE_DURATION_S 5, IDPBENCH_SHARE_WARMUP_S 2, IDPBENCH_SHARE_WARMUP_MAX_S 15: want whole numbers (windows and seconds >= 1)"},
		{name: "precision rounds are gone", env: map[string]string{"IDPBENCH_PRECISION_ROUNDS": "3"}, error: "IDPBENCH_PRECISION_ROUNDS is no longer read: the interleaved rounds go on while the budget holds them (IDPBENCH_BUDGET_S; --repeats caps them)"},
		{name: "bad budget", env: map[string]string{"IDPBENCH_BUDGET_S": "1h"}, error: "IDPBENCH_BUDGET_S 1h: want whole seconds (0: no budget)"},
		{name: "help", args: []string{"--quick", "-h"}, error: "help"},
		{name: "unknown", args: []string{"--nope"}, error: "unknown argument --nope"},
		{name: "missing value", args: []string{"--only"}, error: "--only needs a value"},
		{name: "bad run id", args: []string{"--run-id", "a/b"}, error: "bad run id: a/b"},
		{name: "bad repeats", args: []string{"--repeats", "0"}, error: "--repeats (IDPBENCH_REPEATS) 0: want a whole number >= 1"},
		{name: "bad env repeats", args: []string{"--quick"}, env: map[string]string{"IDPBENCH_REPEATS": "x"}, error: "--repeats (IDPBENCH_REPEATS) x: want a whole number >= 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.args, func(k string) string { return c.env[k] }, day)
			var u usageError
			switch {
			case c.error == "help":
				if !errors.Is(err, errHelp) {
					t.Fatalf("want the help, got %v", err)
				}
			case c.error != "":
				if !errors.As(err, &u) || u.Msg != c.error {
					t.Fatalf("want usage error %q, got %v", c.error, err)
				}
			case err != nil:
				t.Fatal(err)
			case !equalOptions(got, c.want):
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func equalOptions(a, b Options) bool {
	return a.Quick == b.Quick && a.Fresh == b.Fresh && slices.Equal(a.Products, b.Products) && slices.Equal(a.Scenarios, b.Scenarios) &&
		a.RunID == b.RunID && a.Profile == b.Profile && a.Repeats == b.Repeats && a.LadderLen == b.LadderLen && slices.Equal(a.Env, b.Env) &&
		a.BudgetS == b.BudgetS && slices.Equal(a.Twins, b.Twins) && slices.Equal(a.Shares.Shares, b.Shares.Shares) && a.Shares.ShareWindows == b.Shares.ShareWindows &&
		a.Shares.ShareDurationS == b.Shares.ShareDurationS && a.Shares.ShareWarmupS == b.Shares.ShareWarmupS &&
		a.Shares.ShareWarmupMaxS == b.Shares.ShareWarmupMaxS && a.Shares.ShareStable == b.Shares.ShareStable
}

// TestCheckProducts: a product is known when registered or when the tree
// has its adapter (the stand-ins of testdata/root); the others are one
// usage error naming each and listing the known.
func TestCheckProducts(t *testing.T) {
	known := KnownProducts(products.Names(), filepath.Join("testdata", "root"))
	for _, want := range []string{"refop", "keycloak", "oidc", "example", "ok", "noinstall"} {
		if !slices.Contains(known, want) {
			t.Errorf("KnownProducts: no %s in %q", want, known)
		}
	}
	if slices.Contains(known, "nosuch") || !slices.IsSorted(known) {
		t.Errorf("KnownProducts: %q", known)
	}
	if err := checkProducts([]string{"refop", "ok"}, known); err != nil {
		t.Error(err)
	}
	err := checkProducts([]string{"refop", "keycloack", "Bad"}, known)
	var u usageError
	if !errors.As(err, &u) || !strings.HasPrefix(u.Msg, "--only: unknown product keycloack, Bad (known: example, fake, ") {
		t.Errorf("want a usage error naming keycloack and Bad with the known products, got %v", err)
	}
}

// TestStepTotal: products x (scenarios x (the ladder + a window a later
// round + shares windows) + 1), and a twin a scenario a later round.
func TestStepTotal(t *testing.T) {
	for _, c := range []struct{ products, scenarios, l, rounds, shares, want int }{
		{4, 2, 2, 1, 0, 4 * (2*2 + 1)},
		{1, 1, 1, 2, 0, 1*(1*2+1) + 1},
		{3, 8, 7, 3, 2, 3*(8*(7+2+2)+1) + 8*2},
	} {
		if got := StepTotal(c.products, c.scenarios, c.l, c.rounds, c.shares); got != c.want {
			t.Errorf("StepTotal(%d, %d, %d, %d, %d) = %d, want %d", c.products, c.scenarios, c.l, c.rounds, c.shares, got, c.want)
		}
	}
}

func TestActions(t *testing.T) {
	for code, want := range map[int]action{0: actNext, 3: actNext, 4: actLost, 130: actInterrupted, 1: actFailed, 2: actFailed, 137: actFailed} {
		if got := ladderAction(code); got != want {
			t.Errorf("ladderAction(%d) = %d, want %d", code, got, want)
		}
	}
	for code, want := range map[int]action{0: actNext, 3: actFailed, 4: actFailed, 130: actInterrupted, 1: actFailed} {
		if got := gcjitterAction(code); got != want {
			t.Errorf("gcjitterAction(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestMetaArgs(t *testing.T) {
	place := []string{"--placement-mode", "shared", "--driver-cpus", "0-1", "--server-cpus", "0-1", "--host-cpus", "2", "--placement-reason", "why"}
	got := MetaArgs([]string{"--base", "b.json"}, "ok", "quick", []string{"discovery", "userinfo"}, "2026-12-03T10:00:00Z", "", place, 1, Order{Random: true, Seed: 9}, "m.json")
	want := []string{"meta", "--base", "b.json", "--status", "ok", "--profile", "quick", "--scenarios", "discovery userinfo",
		"--start", "2026-12-03T10:00:00Z", "--placement-mode", "shared", "--driver-cpus", "0-1", "--server-cpus", "0-1", "--host-cpus", "2",
		"--placement-reason", "why", "--rounds", "1", "-o", "m.json"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = MetaArgs([]string{"--product", "p", "--product-version", ""}, "na", "full", []string{"discovery"}, "", "down", nil, 3, Order{Seed: 9}, "m.json")
	want = []string{"meta", "--product", "p", "--product-version", "", "--status", "na", "--profile", "full", "--scenarios", "discovery",
		"--na-reason", "down", "--rounds", "3", "--round-order", "interleaved", "-o", "m.json"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = MetaArgs([]string{"--base", "b.json"}, "ok", "full", []string{"discovery"}, "", "", nil, 3, Order{Random: true, Seed: 9}, "m.json")
	want = []string{"meta", "--base", "b.json", "--status", "ok", "--profile", "full", "--scenarios", "discovery",
		"--rounds", "3", "--round-order", "interleaved-random", "--round-seed", "9", "-o", "m.json"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
