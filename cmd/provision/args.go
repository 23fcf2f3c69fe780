package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products"
)

// "provision args" answers a product's adapter from the product's entry in
// products (product.Answers) and the run's state, so that the
// adapter only starts, orders and stops things.

const argsHead = `Usage: provision args --product NAME --state DIR VERB [SCENARIO]

Answers a product's adapter (scripts/lib/adapter.sh) from the product's entry
in products and the run's state DIR: the values state_set recorded in
DIR/state.env, the files under it, the PostgreSQL cluster it uses and the
setup summary (DIR/NAME-setup.json). One value a line:

  endpoint SCENARIO     the URL measured (health asks discovery's)
  pool SCENARIO|POOL    how the pool of SCENARIO, or the product's own POOL, is
                        minted and recorded: its kind, mode and flow (as
                        provision pool records them), then mintpool's arguments
                        but -o, and but -n for a scenario's (the ladder sizes it)
  readback              readback's arguments after setup, or nothing
  setup                 the arguments of provision NAME (provisioning through its API)
  config                the configuration file written before the first start
  start                 the start command's arguments after the program

endpoint needs what up recorded; pool and readback also what setup wrote. A
scenario the product cannot run (provision na, which the adapter asks first)
has no endpoint and no pool (an error). Secrets are named by their files,
never printed. What the ladder measures of a scenario (its URL, loadstep's
and the metrics' arguments, the pool's lifetime) and the sampler's arguments
are read in-process from the same entry (product.Product.Answer, SampleArgs).
Products with answers: %s (the generic adapter's: provision oidc).

Flags:
`

const argsTail = `
Exit status: 0 ok, 1 a value the state lacks, 2 usage error.

Example:
  provision args --product hydra --state "$state" pool refresh
`

// argsVerbs maps a verb to whether it takes a scenario (or a pool's name)
// and whether it needs what setup wrote.
var argsVerbs = map[string]struct{ named, afterSetup bool }{
	"endpoint": {true, false}, "pool": {true, true}, "readback": {false, true}, "setup": {false, false},
	"config": {false, false}, "start": {false, false},
}

func argsVerbNames() string { return strings.Join(slices.Sorted(maps.Keys(argsVerbs)), ", ") }

// runProductArgs is "provision args".
func runProductArgs(_ context.Context, args []string, e env) error {
	var prod, state string
	fs := cli.NewFlagSet("args")
	fs.StringVar(&prod, "product", "", "the product (its adapter's PRODUCT); required")
	fs.StringVar(&state, "state", "", "the adapter's state directory; required")
	if err := parse(fs, args, fmt.Sprintf(argsHead, strings.Join(answering(), ", ")), argsTail, e); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("a verb is required: %s", argsVerbNames())
	}
	verb, ok := argsVerbs[fs.Arg(0)]
	switch {
	case !ok:
		return cli.Usagef("unknown verb %q (want %s)", fs.Arg(0), argsVerbNames())
	case fs.NArg() != map[bool]int{false: 1, true: 2}[verb.named]:
		return cli.Usagef("%s wants %d argument(s) after the verb, got %d", fs.Arg(0), map[bool]int{false: 0, true: 1}[verb.named], fs.NArg()-1)
	case state == "":
		return cli.Usagef("--state DIR is required")
	case verb.named && fs.Arg(0) != "pool" && !slices.Contains(scenarioNames(), fs.Arg(1)):
		return cli.Usagef("unknown scenario %q (want %s)", fs.Arg(1), strings.Join(scenarioNames(), ", "))
	}
	p, ok := products.Lookup(prod)
	if !ok || p.Answers == nil {
		return cli.Usagef("--product %q: want one of %s", prod, strings.Join(answering(), ", "))
	}
	st, err := product.ReadState(state, prod)
	if err != nil {
		return err
	}
	out, err := answer(fs.Arg(0), p.Answers, st, fs.Arg(1))
	if err == nil {
		err = st.Err()
		if verb.afterSetup {
			err = st.SetupErr()
		}
	}
	if err != nil {
		return err
	}
	return say(e, out)
}

// answering lists the products with answers.
func answering() []string {
	return products.NamesWith(func(p product.Product) bool { return p.Answers != nil })
}

// answer is the answer of verb, printed as it is.
func answer(verb string, a *product.Answers, st *product.State, name string) (string, error) {
	none := func(what string) error { return fmt.Errorf("%s has no %s: its adapter does without", st.Product, what) }
	switch verb {
	case "endpoint":
		r, ok := a.Table(st).Scenarios[name]
		if !ok {
			return "", fmt.Errorf("%s has no %s endpoint: the scenario is N/A (provision na %[1]s %[2]s)", st.Product, name)
		}
		return r.Endpoint + "\n", nil
	case "pool":
		return argsPool(a.Table(st), st.Product, name)
	case "readback":
		if a.Readback == nil {
			return "", nil
		}
		return text(a.Readback(st)), nil
	case "setup":
		if a.Setup == nil {
			return "", none("setup arguments")
		}
		return text(a.Setup(st)), nil
	case "start":
		if a.Start == nil {
			return "", none("start arguments")
		}
		return text(a.Start(st)), nil
	case "config":
		if a.Config == nil {
			return "", none("configuration file")
		}
		return a.Config(st), nil
	}
	return "", fmt.Errorf("no verb %s", verb)
}

// argsPool prints a pool's plan: KIND, MODE, FLOW, then mintpool's arguments.
func argsPool(t product.Table, prod, name string) (string, error) {
	var p product.Pool
	if r, ok := t.Scenarios[name]; ok && r.Pool != nil {
		p = *r.Pool
	} else if own, ok := t.Pools[name]; ok {
		p = own
	} else {
		return "", fmt.Errorf("%s: %s takes no pool", prod, name)
	}
	return text(slices.Concat([]string{p.Kind, p.Mode, p.Flow}, p.Args)), nil
}

// text is values one a line.
func text(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return strings.Join(v, "\n") + "\n"
}
