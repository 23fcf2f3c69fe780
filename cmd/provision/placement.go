package main

import (
	"context"
	"os"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
)

const placementHead = `Usage: provision placement [--format env|meta]

Resolves where scripts/run-comparison.sh puts the load generator and the
measurement tools (the driver) and the product with its PostgreSQL (the
server), from the CPUs this process may use (/proc/self/status
Cpus_allowed_list) and what the environment asks (internal/placement):
IDPBENCH_DRIVER_CPUS and IDPBENCH_SERVER_CPUS (--driver-cpus, --server-cpus:
taskset -c lists, both or neither, disjoint, within those CPUs) or
IDPBENCH_PIN=0 (--no-pin: shared). Neither: with 4 CPUs or more about a
quarter of them, the highest-numbered, at least one, for the driver and the
rest for the server; fewer: shared.

--format env (the default) prints one KEY=VALUE line a variable, in this
order, the value as it is (never a newline in it), for a shell to
export (the run tool resolves its placement itself, internal/placement):
  IDPBENCH_DRIVER_CPUS       the driver's CPUs; empty when shared
  IDPBENCH_SERVER_CPUS       the server's CPUs; empty when shared
  IDPBENCH_PLACEMENT         pinned or shared
  IDPBENCH_PLACEMENT_REASON  why shared; empty when pinned
  IDPBENCH_HOST_CPUS         how many CPUs this process may use
--format meta prints the placement as provision meta's flags, one a line (a
shared run's sets: every CPU it may use).

Flags:
`

const placementTail = `
Exit status: 0 ok, 1 the CPUs this process may use unreadable, 2 a bad
placement (the message names run-comparison.sh's flag and its variable).

Examples:
  IDPBENCH_DRIVER_CPUS=3 IDPBENCH_SERVER_CPUS=0-2 provision placement
  provision placement --format meta |
    xargs -d '\n' provision meta --base "$state/meta.json" --status ok --profile quick -o meta.json
`

// Formats of provision placement.
const (
	placementEnv  = "env"
	placementMeta = "meta"
)

// placementCmd is "provision placement" with its seams: the environment
// and the CPUs this process may use.
type placementCmd struct {
	getenv  func(string) string
	allowed func() (placement.Set, error)
}

// runPlacement is "provision placement" on this process.
func runPlacement(ctx context.Context, args []string, e env) error {
	return placementCmd{getenv: os.Getenv, allowed: placement.Allowed}.run(ctx, args, e)
}

func (c placementCmd) run(_ context.Context, args []string, e env) error {
	var format string
	fs := cli.NewFlagSet("placement")
	fs.StringVar(&format, "format", placementEnv, "what to print: env (KEY=VALUE lines) or meta (provision meta's flags)")
	if err := parse(fs, args, placementHead, placementTail, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision placement takes flags only)", fs.Arg(0))
	}
	if format != placementEnv && format != placementMeta {
		return cli.Usagef("--format %q: want %s or %s", format, placementEnv, placementMeta)
	}
	allowed, err := c.allowed()
	if err != nil {
		return err
	}
	p, err := placement.Resolve(placement.FromEnv(c.getenv), allowed)
	if err != nil {
		// The user's error, in run-comparison.sh's flags (the message names
		// them): exit 2, without pointing at provision's --help.
		return cli.CodeError{Code: cli.ExitUsage, Err: err}
	}
	if format == placementMeta {
		return printLines(e, placement.MetaArgs(p.Meta()))
	}
	return printLines(e, placement.Env(p))
}
