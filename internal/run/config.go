package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/placement"
)

// Help is the run's --help with defaults as the products of a run without
// --only, on stdout (exit 0, as every tool's); a bad command line is one
// line naming what is wrong and the hint at HelpName, exit 2.
// scripts/run-comparison.sh prints it for --help without building
// anything, from HelpFile, which TestHelpFile holds equal to the
// registry's.
func Help(defaults []string) string {
	return strings.Replace(help, "DEFAULT_PRODUCTS", strings.Join(defaults, " "), 1)
}

// HelpName is the command whose --help explains the run's command line: the
// script that runs it.
const HelpName = "scripts/run-comparison.sh"

// HelpFile is where the script finds Help, from the repository's root.
const HelpFile = "scripts/lib/run-comparison.help"

const help = `run-comparison.sh: the whole comparison, every product's windows side by side in time.

  scripts/run-comparison.sh [--quick] [--fresh] [--only P[,P]] [--run-id ID]
                            [--repeats N] [--full-ladder]
                            [--driver-cpus LIST --server-cpus LIST | --no-pin]

Builds the tools, says what it will do (products, profile, budget, rounds,
where the results go; for the generic adapter, its configuration checked:
provision oidc check) and starts one shared PostgreSQL. Round 1, product after
product: install, cold starts A and B, setup, and the level search (every
scenario's ladder, scripts/ladder.sh); the product then stays up. Then the
interleaved rounds, every product up: in each, every cell (product x
scenario with a level) one window at its level, scenario by scenario in a
drawn order, the products of a scenario side by side in a drawn order of
their own -- so that a ratio between two products compares windows seconds
apart -- with one product per scenario measured twice (the A/A check), as
many rounds as the budget holds. Then each product's closing: the latency at
shares of capacity, GC jitter (scripts/gcjitter.sh), meta, down; then
results/ID/COMPARISON.md and results/latest. The full profile of the default
products takes about an hour on 2 CPUs.

  --quick        smoke profile: ladder 2 8 32, warmup 1-5 s, 3 s search windows,
                 one interleaved round of 2 s windows (default: full, 4..128,
                 1-8 s, 2 s search windows, rounds of 3 s windows within the
                 budget; GC jitter 60 s in both)
  --fresh        delete the run directory first (default: resume it)
  --only P,..    products (default: DEFAULT_PRODUCTS, the registry's (products/products.go);
                 a name that is neither registered nor a products/NAME/adapter
                 exits 2 listing the known)
  --run-id ID    results/ID (default "quick", or "full-YYYYMMDD"); a rerun resumes
  --repeats N    the most rounds, round 1 included (env IDPBENCH_REPEATS; default
                 40, --quick 2; 1: each product closes after its search)
  --full-ladder  measure every ladder to its end (env IDPBENCH_FULL_LADDER=1)
  --version      print the tools' version (the tree's revision) and exit

Budget: an interleaved round starts while the session's elapsed time plus
the round (its windows at the seconds per window of the rounds so far) plus
closing every open product (its cells' shares, GC jitter + 40 s) stays
within IDPBENCH_BUDGET_S (default 3540, --quick 0 = none); the first that
does not closes every product. The log says each decision with its figures,
each round's drawn order, and how many rounds every cell got.

A/A: IDPBENCH_AA names the products measured twice in each round (default
"refop keycloak", a Go and a JVM product, one per scenario in turn; none:
no A/A windows).

Order: round 1 runs the products and their scenarios in the order given;
every interleaved round draws a new order of the scenarios and, within
each, of its products (IDPBENCH_ORDER=random, the default, or fixed), seeded
by IDPBENCH_ORDER_SEED (default: a hash of the run id, so a resumed run
draws the same order).

Latency at shares of capacity: a product's closing measures
each cell with a capacity again in rate mode at IDPBENCH_SHARES percent of
it (default "50 80"; none: none), IDPBENCH_SHARE_WINDOWS windows each
(default 1) of IDPBENCH_SHARE_DURATION_S (5, --quick 3), on twice the
plateau's most connections or more, each after a 1 s ramp to the rate and a
warmup of at least IDPBENCH_SHARE_WARMUP_S (2, --quick 1) that lasts until
the corrected latency has held at its calmest for 2 s (--quick 1 s), at most
IDPBENCH_SHARE_WARMUP_MAX_S (15, --quick 4). A window whose queue grew through it is not sustained and
shows no latency; up to IDPBENCH_SHARE_SEARCH windows (default 2) then look
below it for the highest share the product sustains, within the budget.
  --driver-cpus LIST, --server-cpus LIST
                 pin loadstep, minting, sampler and coldstart to one set, the product
                 and PostgreSQL to the other (taskset lists "3", "0-2", "0,2"; env
                 IDPBENCH_DRIVER_CPUS, IDPBENCH_SERVER_CPUS); both or neither, disjoint.
                 Default: with >= 4 CPUs a quarter, the highest, for the driver; else shared
  --no-pin       share every CPU (env IDPBENCH_PIN=0)

Environment: IDPBENCH_SCENARIOS, IDPBENCH_RESULTS (default <repo>/results),
IDPBENCH_NO_BUILD=1 (use the tools in IDPBENCH_BIN), IDPBENCH_TMP, IDPBENCH_CACHE,
ZITADEL_BIN, IDPBENCH_MODE, IDPBENCH_OIDC_CONFIG, and ladder.sh's and
gcjitter.sh's variables.

Every product asked for is a row, N/A with its reason where it could not
run. Exit codes: 0 ok (N/A rows only where the product's registry entry
declares the condition: NAByDesign, e.g. Zitadel with no binary or engine
here), 1 a product failed to install, start, set up or run, or left
something behind (the log ends with a summary of them), or the run id is
held by a live session, 2 usage (an unknown product, a bad configuration of
the generic adapter), 130 interrupted.

Examples:
  scripts/run-comparison.sh --quick --only refop,hydra
  IDPBENCH_BUDGET_S=0 scripts/run-comparison.sh --repeats 8 --run-id base

Rules and records: docs/design-reference.md#the-scripts and docs/design-methodology.md.
`

// DefaultScenarios are the scenarios of a run without IDPBENCH_SCENARIOS.
const DefaultScenarios = "discovery client_credentials client_credentials_login jwt_bearer introspect auth_code refresh userinfo"

// Options are a run's command line and environment, validated.
type Options struct {
	Quick     bool
	Fresh     bool
	Products  []string
	Scenarios []string
	RunID     string
	Profile   string // quick or full
	Repeats   int    // the most rounds, round 1 (the level search) included
	LadderLen int    // the ladder's levels (IDPBENCH_LADDER or the profile's)
	// BudgetS is the session's time budget (IDPBENCH_BUDGET_S: full 3540,
	// 59 min; quick 0, none): an interleaved round starts only while it
	// and the closing of every open product still fit it.
	BudgetS int
	// Twins are the products measured twice in every interleaved round, as
	// if each were two (the A/A check; IDPBENCH_AA, default "refop
	// keycloak": a Go and a JVM product), one of them per scenario in turn.
	Twins []string
	// Shares are the windows at fixed shares of each cell's capacity that
	// close a product's last round (ladder.ParseShares).
	Shares ladder.ShareSettings
	// Order is the order of the products and scenarios in rounds after the
	// first (random by default, seeded).
	Order Order
	// Env are the variables the command line sets for every child
	// (--repeats, --driver-cpus, --server-cpus, --no-pin, --full-ladder;
	// IDPBENCH_REPEATS=2 by default in the full profile), "K=V".
	Env []string
}

// MaxRounds is the most rounds a product may be measured in.
func (o Options) MaxRounds() int { return o.Repeats }

// errHelp is -h/--help: the help, exit 0; errVersion is --version.
var (
	errHelp    = errors.New("help")
	errVersion = errors.New("version")
)

// usageError is a bad command line: logged, exit 2.
type usageError struct{ Msg string }

func (e usageError) Error() string { return e.Msg }

var (
	runIDRe   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	productRe = regexp.MustCompile(`^[a-z0-9_-]+$`)
	repeatsRe = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// Parse reads the command line args and the environment (getenv); today
// names the default full run id, full-YYYYMMDD.
func Parse(args []string, getenv func(string) string, today time.Time) (Options, error) {
	var o Options
	only, runID, repeats := "", "", getenv("IDPBENCH_REPEATS")
	set := map[string]string{}
	var order []string
	export := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", usageError{a + " needs a value"}
			}
			i++
			return args[i], nil
		}
		var err error
		switch a {
		case "--quick":
			o.Quick = true
		case "--fresh":
			o.Fresh = true
		case "--only":
			only, err = value()
		case "--run-id":
			runID, err = value()
		case "--repeats":
			if repeats, err = value(); err == nil {
				export("IDPBENCH_REPEATS", repeats)
			}
		case "--driver-cpus", "--server-cpus":
			var v string
			if v, err = value(); err == nil {
				export(map[string]string{"--driver-cpus": placement.EnvDriver, "--server-cpus": placement.EnvServer}[a], v)
			}
		case "--no-pin":
			export(placement.EnvPin, "0")
		case "--full-ladder":
			export("IDPBENCH_FULL_LADDER", "1")
		case "-h", "--help":
			return o, errHelp
		case "--version":
			return o, errVersion
		default:
			return o, usageError{"unknown argument " + a}
		}
		if err != nil {
			return o, err
		}
	}
	if only != "" { // else the registry's default (Registry.Default), set by Main
		o.Products = strings.Split(only, ",")
	}
	o.Scenarios = strings.Fields(cmpOr(getenv("IDPBENCH_SCENARIOS"), DefaultScenarios))
	lad := getenv("IDPBENCH_LADDER")
	if o.Quick {
		o.Profile, o.RunID = "quick", cmpOr(runID, "quick")
		o.LadderLen = len(strings.Fields(cmpOr(lad, ladder.QuickLadder)))
	} else {
		o.Profile, o.RunID = "full", cmpOr(runID, "full-"+today.Format("20060102"))
		o.LadderLen = len(strings.Fields(cmpOr(lad, ladder.FullLadder)))
		// As many interleaved rounds as the budget holds.
		if repeats == "" {
			repeats = DefaultFullRounds
			export("IDPBENCH_REPEATS", repeats)
		}
	}
	if !runIDRe.MatchString(o.RunID) {
		return o, usageError{"bad run id: " + o.RunID}
	}
	if repeats == "" {
		repeats = DefaultQuickRounds
	}
	if !repeatsRe.MatchString(repeats) {
		return o, usageError{fmt.Sprintf("--repeats (IDPBENCH_REPEATS) %s: want a whole number >= 1", repeats)}
	}
	o.Repeats, _ = strconv.Atoi(repeats)
	var err error
	if o.BudgetS, err = parseBudget(getenv, o.Quick); err != nil {
		return o, err
	}
	o.Twins = strings.Fields(cmpOr(getenv("IDPBENCH_AA"), "refop keycloak"))
	if getenv("IDPBENCH_AA") == "none" {
		o.Twins = nil
	}
	if o.Shares, err = ladder.ParseShares(o.Quick, getenv); err != nil {
		return o, usageError{err.Error()}
	}
	if o.Order, err = parseOrder(getenv, o.RunID); err != nil {
		return o, err
	}
	for _, k := range order {
		o.Env = append(o.Env, k+"="+set[k])
	}
	return o, nil
}

// DefaultFullRounds and DefaultQuickRounds are the most rounds, round 1
// included, without --repeats: the full profile's as many as the budget
// holds (the cap is seldom reached), the quick one's the level search and
// one interleaved round (a paired ratio without an interval).
const (
	DefaultFullRounds  = "40"
	DefaultQuickRounds = "2"
)

// parseBudget reads IDPBENCH_BUDGET_S; the precision rounds' variables
// are refused: the interleaved rounds replaced them.
func parseBudget(getenv func(string) string, quick bool) (int, error) {
	for _, k := range []string{"IDPBENCH_PRECISION_ROUNDS", "IDPBENCH_PRECISION_PCT"} {
		if getenv(k) != "" {
			return 0, usageError{fmt.Sprintf("%s is no longer read: the interleaved rounds go on while the budget holds them (IDPBENCH_BUDGET_S; --repeats caps them)", k)}
		}
	}
	budget := "3540"
	if quick {
		budget = "0"
	}
	v := cmpOr(getenv("IDPBENCH_BUDGET_S"), budget)
	b, ok := ladder.Whole(v)
	if !ok {
		return 0, usageError{fmt.Sprintf("IDPBENCH_BUDGET_S %s: want whole seconds (0: no budget)", v)}
	}
	return b, nil
}

// KnownProducts are the products a run may be asked for: the registry's
// names and every products/NAME/adapter of the tree at root (internal/run's
// tests run stand-ins so), sorted.
func KnownProducts(names []string, root string) []string {
	known := slices.Clone(names)
	adapters, _ := filepath.Glob(filepath.Join(root, "products", "*", "adapter"))
	for _, a := range adapters {
		if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			known = append(known, filepath.Base(filepath.Dir(a)))
		}
	}
	slices.Sort(known)
	return slices.Compact(known)
}

// checkProducts is a usage error naming every product that is not known,
// with the known ones: a typo must not cost an hour and an N/A row.
func checkProducts(asked, known []string) error {
	var unknown []string
	for _, p := range asked {
		if !productRe.MatchString(p) || !slices.Contains(known, p) {
			unknown = append(unknown, p)
		}
	}
	if len(unknown) > 0 {
		return usageError{fmt.Sprintf("--only: unknown product %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))}
	}
	return nil
}

// StepTotal is the run's most load steps: every product's round-1 ladder
// (ladderLen levels) and one window in each later round of every scenario,
// its windows at shares and its GC-jitter run, and each later round's A/A
// twin of every scenario.
func StepTotal(products, scenarios, ladderLen, rounds, shares int) int {
	return products*(scenarios*(ladderLen+rounds-1+shares)+1) + scenarios*(rounds-1)
}

// Ladder exit codes and what the run does about them.
type action int

const (
	actNext        action = iota // go on (0 ok, 3 the scenario N/A)
	actLost                      // the product stopped answering: failed, with STATE/lost's reason
	actInterrupted               // the run ends, exit 130
	actFailed                    // failed, naming the exit code
)

// ladderAction is what an exit code of a ladder means for the run.
func ladderAction(code int) action {
	switch code {
	case 0, ladder.ExitNA:
		return actNext
	case ladder.ExitLost:
		return actLost
	case 130:
		return actInterrupted
	}
	return actFailed
}

// gcjitterAction is what an exit code of the GC-jitter run means.
func gcjitterAction(code int) action {
	switch code {
	case 0:
		return actNext
	case 130:
		return actInterrupted
	}
	return actFailed
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
