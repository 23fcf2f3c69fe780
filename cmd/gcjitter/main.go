// Command gcjitter is the GC-jitter run of one running product: one
// continuous loadstep, long enough for garbage collectors and background
// jobs to show up in the P99 of its intervals (internal/gcjitter);
// scripts/gcjitter.sh runs it.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/gcjitter"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/products"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: gcjitter PRODUCT [--quick] [--run-dir DIR] [--state-dir DIR]
                [--step-offset K --step-total T]

The GC-jitter run of one running product (scripts/gcjitter.sh runs it): one
loadstep at c=32 on userinfo (S6), else client_credentials (labels fallback,
fallback_reason: userinfo N/A, or its access tokens -- the entry's lifetime --
expire within the run plus 30 s), 5 s fixed warmup, 60 s of 10 s
intervals, label phase=gcjitter, on the driver CPUs, into
DIR/PRODUCT/gcjitter.json; a complete one is skipped. The userinfo pool is the
ladder's reuse pool while it is young enough and outlives the run, else minted
again; the reference OP's adapter starts it again first (fresh); the
product's metrics (its entry's metrics arguments) are scraped every 5 s. The
product must be up and set up. Rules and records:
docs/design-methodology.md#gc-jitter.

Flags:
`

const usageTail = `
Environment: IDPBENCH_GCJITTER_S (duration), IDPBENCH_GCJITTER_C (connections),
IDPBENCH_GCJITTER_WARMUP_S (else IDPBENCH_WARMUP_S, else 5), IDPBENCH_REUSE_POOL
(256), IDPBENCH_REUSE_MAX_AGE_S (120), IDPBENCH_DRIVER_CPUS, IDPBENCH_BIN
(loadstep), IDPBENCH_ROOT (the adapters), RUN_DIR, STATE_DIR.

Exit codes: 0 ok, 1 failure, 2 usage, 130 interrupted (loadstep got SIGINT and
wrote its record marked interrupted).

Example:
  IDPBENCH_GCJITTER_S=300 scripts/gcjitter.sh keycloak --run-dir results/mine --state-dir "$st"
`

type flags struct {
	o       gcjitter.Options
	version bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gcjitter", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	o := &f.o
	fs.BoolVar(&o.Quick, "quick", false, "the smoke profile (label profile=quick; the same 60 s)")
	o.Where.Flags(fs, "PRODUCT/gcjitter.json; a complete one is skipped", "1")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "gcjitter", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return cli.Fail(stderr, "gcjitter", cli.Usagef("want PRODUCT, got %d arguments", fs.NArg()))
	}
	f.o.Product = fs.Arg(0)
	entry, ok := products.Lookup(f.o.Product)
	if !ok {
		return cli.Fail(stderr, "gcjitter", cli.Usagef("unknown product %q (want %s)", f.o.Product, strings.Join(products.Names(), ", ")))
	}
	c, err := gcjitter.NewConfig(f.o, getenv)
	if err == nil {
		err = gcjitter.Run(ctx, c, gcjitter.Env{Stdout: stdout, Stderr: stderr, Ask: entry.Answer})
	}
	var e ladder.Exit
	if errors.As(err, &e) {
		return int(e)
	}
	return cli.Fail(stderr, "gcjitter", err)
}
