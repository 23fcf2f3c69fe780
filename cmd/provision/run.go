package main

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products"
)

const toolName = "provision"

// env is the process's streams, passed instead of touching os.
type env = cli.Env

// subcommands are each product's own provisioning ("provision NAME", its
// entry's Provision), then the ones every product shares.
func subcommands() []cli.Subcommand {
	var subs []cli.Subcommand
	for _, p := range products.All() {
		if p.Provision != nil {
			subs = append(subs, *p.Provision)
		}
	}
	return append(subs, []cli.Subcommand{
		{Name: "meta", Summary: "write a product's idpbench.meta/v1 record from products and the run's inputs", Run: runMeta},
		{Name: "pool", Summary: "record a minted pool (scenario, kind, mode, size, flow) in STATE/pools.jsonl for the meta", Run: runPool},
		{Name: "na", Summary: "print why a product cannot run a scenario (its static N/A reason), or nothing", Run: runNA},
		{Name: "args", Summary: "answer a product's adapter from products and the run's state: endpoints, loadstep, pool, setup and start arguments", Run: runProductArgs},
		{Name: "jdk", Summary: "find the JDK a product runs on: its home and \"vendor version (home)\"", Run: runJDK},
		{Name: "oidc", Summary: "answer the generic oidc adapter from its configuration file: values, N/A reasons, arguments", Run: runOIDC},
		{Name: "placement", Summary: "resolve where the run puts the driver and the server (IDPBENCH_DRIVER_CPUS, IDPBENCH_SERVER_CPUS, IDPBENCH_PIN): KEY=VALUE lines or meta's flags", Run: runPlacement},
		{Name: "compose", Summary: "read a product's compose file: the placement override (placement), the memory limits (limits)", Run: runCompose},
	}...)
}

func tool() cli.Tool {
	return cli.Tool{
		Name:     toolName,
		Synopsis: "SUBCOMMAND [FLAGS]",
		About: "Prepares a product for idpbench through its own APIs and writes what the\n" +
			"benchmark records about it. Secrets come from files or the environment,\n" +
			"never from arguments, and are never printed.\n",
		Exits: exitStatus,
		Examples: []string{
			"provision zitadel --issuer http://localhost:8080 --pat-file state/admin.pat --out-dir state/secrets",
			"provision meta --product refop --product-version v3.52.0 --state state -o state/meta.json",
		},
		Subcommands: subcommands(),
	}
}

// run runs provision; errors are named after the subcommand
// ("provision zitadel: ...").
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sub, err := tool().Dispatch(ctx, args, env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	who := toolName
	if sub != "" {
		who += " " + sub
	}
	return cli.Done(stderr, who, err)
}

// parse parses a subcommand's args; --help prints head, the flags and tail,
// and the exit statuses every subcommand shares unless head or tail states
// its own ("Exit status:").
func parse(fs *pflag.FlagSet, args []string, head, tail string, e env) error {
	if !strings.Contains(head+tail, "Exit status:") {
		tail = "\n" + exitStatus + "\n" + tail
	}
	return cli.Help{Tool: toolName, Head: head, Tail: tail}.ParseSub(fs, args, e.Stdout)
}

// exitStatus is what every subcommand of provision exits with.
const exitStatus = "Exit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted."
