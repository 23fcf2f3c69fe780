package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products"
)

const naHead = `Usage: provision na PRODUCT SCENARIO

Prints why PRODUCT cannot run SCENARIO anywhere (products), one
line, or nothing when it can: an adapter's product_na_reason. Products: %s.

Flags:
`

const naTail = `
Example:
  provision na hydra jwt_bearer
`

// runNA is "provision na".
func runNA(_ context.Context, args []string, e env) error {
	fs := cli.NewFlagSet("na")
	if err := parse(fs, args, fmt.Sprintf(naHead, strings.Join(products.Names(), ", ")), naTail, e); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return cli.Usagef("want PRODUCT SCENARIO, got %d arguments", fs.NArg())
	}
	p, ok := products.Lookup(fs.Arg(0))
	if !ok {
		return cli.Usagef("unknown product %q (want %s)", fs.Arg(0), strings.Join(products.Names(), ", "))
	}
	if !slices.Contains(scenarioNames(), fs.Arg(1)) {
		return cli.Usagef("unknown scenario %q (want %s)", fs.Arg(1), strings.Join(scenarioNames(), ", "))
	}
	if why := p.NA[fs.Arg(1)]; why != "" {
		fmt.Fprintln(e.Stdout, why)
	}
	return nil
}
