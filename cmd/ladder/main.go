// Command ladder measures one scenario's connection ladder on a running
// product: a loadstep window per level, what it measures read from the
// product's registry entry (internal/ladder); scripts/ladder.sh runs it.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/products"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv, nil)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: ladder PRODUCT SCENARIO [--quick] [--repeats N [--round K]] [--full-ladder]
              [--run-dir DIR] [--state-dir DIR] [--step-offset K --step-total T]

The connection ladder of one scenario on one running product (scripts/ladder.sh
runs it; positionals may come before or after the flags). The product must be
up and set up (products/PRODUCT/adapter up, setup). Each window is one loadstep,
on the driver CPUs, into DIR/PRODUCT/SCENARIO-c<N>.json (repeat K >= 2:
-c<N>-r<K>.json); a complete one is skipped, so a rerun resumes. What a
scenario measures (its URL, loadstep's and the metrics' arguments, its pool)
is the product's registry entry's answer on the state directory. Before each
window the reference OP's adapter starts it again (fresh) and the window's
pool is minted (or the reuse pool kept while its tokens outlive the window);
after each, the product's health (its process group, its discovery
endpoint). Round 1 stops at its knee (DIR/PRODUCT/SCENARIO.knee.json says where
and why); later rounds repeat its candidate levels. Rules and records:
docs/design-methodology.md (Ladder, Warmup, Knee, The schedule).

Flags:
`

const usageTail = `
Profiles: full: ladder 4 8 16 32 64 128, warmup 3-60 s, windows of 5 s;
--quick: ladder 2 8 32, warmup 1-5 s, windows of 3 s.

Environment: IDPBENCH_LADDER, IDPBENCH_DURATION_S, IDPBENCH_WARMUP_S (floor),
IDPBENCH_WARMUP_MAX_S (cap; <= floor: fixed), IDPBENCH_WARMUP_TOLERANCE_PCT (10),
IDPBENCH_WARMUP_JIT_MAX_PCT (5), IDPBENCH_REPEATS, IDPBENCH_ROUND,
IDPBENCH_FULL_LADDER, IDPBENCH_REUSE_POOL (256), IDPBENCH_REUSE_MAX_AGE_S (120),
IDPBENCH_CONSUME_PER_CONN_QPS (50), IDPBENCH_POOL_CAP (100000),
IDPBENCH_DRIVER_CPUS, IDPBENCH_BIN (loadstep), IDPBENCH_ROOT (the adapters),
RUN_DIR, STATE_DIR.

Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario N/A for the product,
4 the product stopped answering (STATE_DIR/lost says how), 130 interrupted
(loadstep got SIGINT and wrote its window marked interrupted).

Example:
  st="$(mktemp -d)"; products/refop/adapter up "$st" && products/refop/adapter setup "$st"
  scripts/ladder.sh refop userinfo --quick --run-dir results/mine --state-dir "$st"
`

type flags struct {
	o       ladder.Options
	version bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ladder", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	o := &f.o
	fs.BoolVar(&o.Quick, "quick", false, "the smoke profile: ladder 2 8 32, warmup 1-5 s, windows of 3 s")
	fs.StringVar(&o.Repeats, "repeats", "", "round 1 to the knee, then `N`-1 more windows of each candidate steady level (env IDPBENCH_REPEATS; default 1)")
	fs.StringVar(&o.Round, "round", "", "measure only round `K` (K >= 2 needs round 1's knee record; env IDPBENCH_ROUND)")
	fs.BoolVar(&o.FullLadder, "full-ladder", false, "measure every level; SCENARIO.knee.json says where the rule would stop (env IDPBENCH_FULL_LADDER=1)")
	o.Where.Flags(fs, "PRODUCT/SCENARIO-c<N>[-r<K>].json", "this ladder's most windows")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

// run is the ladder command; interrupt is passed to ladder.Env (nil: cli.ForwardInterrupt).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, interrupt func(*os.Process) error) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "ladder", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 2 {
		return cli.Fail(stderr, "ladder", cli.Usagef("want PRODUCT SCENARIO, got %d arguments", fs.NArg()))
	}
	f.o.Product, f.o.Scenario = fs.Arg(0), fs.Arg(1)
	entry, ok := products.Lookup(f.o.Product)
	if !ok {
		return cli.Fail(stderr, "ladder", cli.Usagef("unknown product %q (want %s)", f.o.Product, strings.Join(products.Names(), ", ")))
	}
	c, err := ladder.NewConfig(f.o, getenv)
	if err == nil {
		_, err = ladder.Run(ctx, c, ladder.Env{Stdout: stdout, Stderr: stderr, Interrupt: interrupt, Ask: entry.Answer})
	}
	var e ladder.Exit
	if errors.As(err, &e) {
		return int(e)
	}
	return cli.Fail(stderr, "ladder", err)
}
