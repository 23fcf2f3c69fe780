package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/composefile"
	"github.com/idpbench/idpbench/internal/placement"
)

// composeTool is "provision compose": what compose mode
// (scripts/lib/compose.sh) reads from a product's compose file, through the
// strict loader of internal/composefile.
func composeTool() cli.Tool {
	return cli.Tool{
		Name:     toolName + " compose",
		Synopsis: "SUBCOMMAND [FLAGS] FILE",
		About:    "Reads a product's compose file, products/NAME/compose.yml (extends resolved, unknown keys refused).\n",
		Exits:    "Exit status: 0 ok, 1 runtime error (an unreadable or unknown-keyed file), 2 usage error.",
		Examples: []string{
			`provision compose placement --cpus 0-2 products/hydra/compose.yml -o "$state/compose.placement.yml"`,
			"provision compose limits products/hydra/compose.yml",
		},
		Subcommands: []cli.Subcommand{
			{Name: "placement", Summary: "write the override giving every service the server CPUs as its cpuset", Run: runComposePlacement},
			{Name: "limits", Summary: `print every service's memory limit, "service LIMIT, ..." in the file's order`, Run: runComposeLimits},
		},
	}
}

// runCompose is "provision compose SUBCOMMAND".
func runCompose(ctx context.Context, args []string, e env) error {
	sub, err := composeTool().Dispatch(ctx, args, e)
	if err != nil && sub != "" && !errors.Is(err, pflag.ErrHelp) {
		return fmt.Errorf("%s: %w", sub, err)
	}
	return err
}

const composePlacementHead = `Usage: provision compose placement --cpus LIST FILE -o OUT

Writes OUT, a compose override giving every service of FILE (in the file's
order) cpuset: LIST, the server's CPUs (IDPBENCH_SERVER_CPUS, a taskset -c
list). With an empty --cpus (a shared run) it removes OUT instead: compose
mode adds OUT to its commands only when it exists.

Flags:
`

const composePlacementTail = `
Example:
  provision compose placement --cpus "$IDPBENCH_SERVER_CPUS" "$(state_get "$state" COMPOSE_FILE)" -o "$state/compose.placement.yml"
`

// runComposePlacement is "provision compose placement".
func runComposePlacement(_ context.Context, args []string, e env) error {
	var cpus, out string
	fs := cli.NewFlagSet("placement")
	fs.StringVar(&cpus, "cpus", "", "the server's CPUs, a taskset -c list (\"0-2\"); empty: no override, OUT removed")
	fs.StringVarP(&out, "output", "o", "", "the override to write (required)")
	if err := parse(fs, args, composePlacementHead, composePlacementTail, e); err != nil {
		return err
	}
	if fs.NArg() != 1 || out == "" {
		return cli.Usagef("want --cpus LIST FILE -o OUT, got %d arguments and -o %q", fs.NArg(), out)
	}
	if cpus != "" {
		if _, err := placement.Parse(cpus); err != nil {
			return cli.Usagef("--cpus %w", err)
		}
	}
	p, err := composefile.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	if cpus == "" {
		if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", out, err)
		}
		return nil
	}
	return atomicfile.Write(out, 0o644, []byte(placementOverride(p, cpus)), e.Stdout)
}

// placementOverride is the override text: a comment, then every service
// with cpuset LIST.
func placementOverride(p composefile.Project, cpus string) string {
	var b strings.Builder
	b.WriteString("# idpbench placement: the server CPUs for every service (IDPBENCH_SERVER_CPUS)\nservices:\n")
	for _, name := range p.Order {
		fmt.Fprintf(&b, "  %s:\n    cpuset: %q\n", name, cpus)
	}
	return b.String()
}

const composeLimitsHead = `Usage: provision compose limits FILE

Prints the memory limit of every service of FILE (deploy.resources.limits.memory,
else mem_limit, extends resolved), one line "service LIMIT, ..." in the
file's order, as the file writes it ("2G"); a service without one says
"none". It is the meta's memory_limit in compose mode.

Flags:
`

const composeLimitsTail = `
Example:
  provision compose limits products/hydra/compose.yml
  # postgres 2G, hydra-migrate 2G, hydra 2G
`

// runComposeLimits is "provision compose limits".
func runComposeLimits(_ context.Context, args []string, e env) error {
	fs := cli.NewFlagSet("limits")
	if err := parse(fs, args, composeLimitsHead, composeLimitsTail, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("want FILE, got %d arguments", fs.NArg())
	}
	p, err := composefile.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	return say(e, memoryLimits(p)+"\n")
}

// memoryLimits is "service LIMIT, ..." in the file's order.
func memoryLimits(p composefile.Project) string {
	parts := make([]string, len(p.Order))
	for i, name := range p.Order {
		limit := p.Services[name].Memory()
		if limit == "" {
			limit = "none"
		}
		parts[i] = name + " " + limit
	}
	return strings.Join(parts, ", ")
}
