package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products"
)

const metaHead = `Usage: provision meta [--base FILE | --product NAME --product-version V [--state DIR ...]] [run flags] [-o FILE]

Writes a product's idpbench.meta/v1 record (schema.Meta), built from what
products knows of the product and what the shell knows of the run.
Three uses, which combine:

  adapter:  --product NAME --product-version V --state DIR [--param K=V]...
            [--endpoint S=URL]... [--scenario-na S=WHY]... [--entry NAME]
            the product's part (settings, config sources, deviations with
            why, notes, known limitations, its static N/A reasons) and the
            run's, from DIR: STATE/pools.jsonl, STATE/facts.json then
            STATE/listeners.json (each optional); from STATE/state.env
            (none without one) compose mode (MODE=compose: the entry's
            compose file, its COMPOSE_FILE's memory limits), the endpoints
            of the product's scenario table (provision args endpoint's),
            and the server version and settings of its PostgreSQL
            cluster (PG_PRIVATE_DIR, else PG_SHARED_DIR, while its pg.env
            is there), asked over loopback; status ok. --endpoint flags
            replace the table's endpoints and --scenario-na reasons go
            over the product's (the generic adapter's entry gives both:
            product.Product.MetaArgs).
  not run:  --product NAME --product-version V --status na --na-reason WHY
            the bare record of a product that did not run.
  run:      [--base FILE] --profile P --status ok|na [--na-reason]
            [--start T] [--end T] [--scenarios LIST] --placement-mode M
            --driver-cpus L --server-cpus L --host-cpus N [--placement-reason]
            [--rounds N [--round-order interleaved|interleaved-random [--round-seed N]]]
            completes a record (the state's, read from --base, or a bare
            one) with how the product's run ended and where it ran
            (the run tool).

Products with an entry: %s. Their --param names:
%s
--entry names the entry when it is not the product's name: the generic
adapter's products (NAME in its configuration) are --entry oidc, which also
takes the configuration's --note, --deviation, --config-source, --setting.

Flags:
`

const metaTail = `
Exit status: 0 ok, 1 runtime error, 2 usage error (bad input names its flag or
file), 130 interrupted.

Example (a product's meta from its state, then the run's record):
  provision meta --product hydra --product-version v2.3.0 --state "$state" -o "$state/meta.json" &&
  provision meta --base "$state/meta.json" --profile quick --status ok --start 2026-12-02T13:02:10Z \
    --scenarios "discovery client_credentials" --placement-mode shared --driver-cpus 0-1 \
    --server-cpus 0-1 --host-cpus 2 --placement-reason "2 CPUs: fewer than 4" -o results/quick/hydra/meta.json
`

type metaFlags struct {
	base, product, version, state, entry  string
	out                                   string
	notes, deviations, sources, settings  []string
	params, endpoints, scenarioNA         []string
	status, naReason, start, end, profile string
	scenarios                             string
	placement                             schema.Placement
	rounds                                schema.Rounds
}

func metaFlagSet(f *metaFlags) *pflag.FlagSet {
	fs := cli.NewFlagSet("meta")
	fs.StringVar(&f.base, "base", "", "a product's meta (from --state) to complete with the run flags")
	fs.StringVar(&f.product, "product", "", "the product (adapter) name")
	fs.StringVar(&f.version, "product-version", "", "the product version (may be empty for a product that did not run)")
	fs.StringVar(&f.state, "state", "", "the adapter's state directory: builds the adapter's part")
	fs.StringArrayVar(&f.params, "param", nil, "KEY=VALUE: a value of the run the product's part needs (repeatable)")
	fs.StringArrayVar(&f.endpoints, "endpoint", nil, "SCENARIO=URL measured (repeatable; replaces the product's table's)")
	fs.StringArrayVar(&f.scenarioNA, "scenario-na", nil, "SCENARIO=WHY it is N/A here (repeatable; over the product's own reasons)")
	fs.StringVar(&f.entry, "entry", "", "the product's entry in products (default: --product)")
	fs.StringArrayVar(&f.notes, "note", nil, "--entry oidc: a NOTE of the configuration (repeatable, in order)")
	fs.StringArrayVar(&f.deviations, "deviation", nil, "--entry oidc: 'WHAT | WHY', a DEVIATION of the configuration (repeatable)")
	fs.StringArrayVar(&f.sources, "config-source", nil, "--entry oidc: 'WHAT | URL', a CONFIG_SOURCE of the configuration (repeatable)")
	fs.StringArrayVar(&f.settings, "setting", nil, "--entry oidc: KEY=VALUE, a SETTING of the configuration (repeatable; a later one wins)")
	fs.StringVar(&f.status, "status", "", "ok or na (default ok for an adapter's record)")
	fs.StringVar(&f.naReason, "na-reason", "", "why the product did not run or stopped (status na)")
	fs.StringVar(&f.profile, "profile", "", "quick or full: adds the run's part (end, unrun scenarios, profile note, placement)")
	fs.StringVar(&f.start, "start", "", "when the product's run began, RFC 3339 (default: not recorded)")
	fs.StringVar(&f.end, "end", "", "when it ended, RFC 3339 (default: now)")
	fs.StringVar(&f.scenarios, "scenarios", "", "the run's scenario list, space or comma separated; the others are N/A (default: all)")
	fs.StringVar(&f.placement.Mode, "placement-mode", "", "pinned or shared")
	fs.StringVar(&f.placement.DriverCPUs, "driver-cpus", "", "the load generator's CPUs (taskset list)")
	fs.StringVar(&f.placement.ServerCPUs, "server-cpus", "", "the product's and PostgreSQL's CPUs (taskset list)")
	fs.IntVar(&f.placement.HostCPUs, "host-cpus", 0, "CPUs the run could use, count")
	fs.StringVar(&f.placement.Reason, "placement-reason", "", "why a shared run is shared")
	fs.IntVar(&f.rounds.Count, "rounds", 0, "how many rounds the run measured each ladder in (default: not recorded)")
	fs.StringVar(&f.rounds.Order, "round-order", "", "with --rounds > 1: interleaved (round r of every product before round r+1), or interleaved-random (and each round after the first in a drawn order)")
	fs.Uint64Var(&f.rounds.Seed, "round-seed", 0, "with --round-order interleaved-random: the draw's seed")
	fs.StringVarP(&f.out, "output", "o", "-", "output file, written atomically; - is stdout")
	return fs
}

func paramHelp() string {
	var b strings.Builder
	for _, p := range products.All() {
		if len(p.Params) == 0 {
			fmt.Fprintf(&b, "  %s: none\n", p.Name)
		}
		for i, prm := range p.Params {
			name := strings.Repeat(" ", len(p.Name)+1)
			if i == 0 {
				name = p.Name + ":"
			}
			fmt.Fprintf(&b, "  %s %s: %s\n", name, prm.Name, prm.Doc)
		}
	}
	return b.String()
}

// runMeta is "provision meta".
func runMeta(ctx context.Context, args []string, e env) error {
	var f metaFlags
	fs := metaFlagSet(&f)
	head := fmt.Sprintf(metaHead, strings.Join(products.Names(), ", "), paramHelp())
	if err := parse(fs, args, head, metaTail, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision meta takes flags only)", fs.Arg(0))
	}
	m, err := buildMeta(ctx, f, fs.Changed, e.Stderr)
	if err != nil {
		return err
	}
	return writeMeta(m, f.out, e.Stdout)
}

// buildMeta builds the record the flags describe; warnings go to stderr.
func buildMeta(ctx context.Context, f metaFlags, changed func(string) bool, stderr io.Writer) (schema.Meta, error) {
	if err := checkCombination(f, changed); err != nil {
		return schema.Meta{}, err
	}
	var m schema.Meta
	var err error
	switch {
	case f.base != "":
		m, err = readBase(f.base)
	case f.state != "":
		m, err = adapterMeta(ctx, f, stderr)
	default:
		m = product.NA(f.product, f.version, f.naReason)
	}
	if err != nil || f.profile == "" {
		return m, err
	}
	run, err := runPart(f)
	if err != nil {
		return schema.Meta{}, err
	}
	run.Apply(&m)
	return m, nil
}

// checkCombination refuses flags that do not go together.
func checkCombination(f metaFlags, changed func(string) bool) error {
	adapterOnly := []string{"state", "param", "endpoint", "scenario-na",
		"entry", "note", "deviation", "config-source", "setting"}
	runOnly := []string{"start", "end", "scenarios", "placement-mode", "driver-cpus", "server-cpus", "host-cpus", "placement-reason", "rounds", "round-order", "round-seed"}
	switch {
	case f.base != "" && (changed("product") || changed("product-version")):
		return cli.Usagef("--base gives the product and version; not --product or --product-version")
	case f.base == "" && f.product == "":
		return cli.Usagef("--product (or --base) is required")
	case f.status != "" && f.status != "ok" && f.status != "na":
		return cli.Usagef("--status %q: want ok or na", f.status)
	case f.status == "na" && f.naReason == "":
		return cli.Usagef("--status na needs --na-reason")
	case f.status != "na" && f.naReason != "":
		return cli.Usagef("--na-reason goes with --status na")
	case f.base == "" && f.state == "" && f.status != "na":
		return cli.Usagef("without --state or --base the record is of a product that did not run: --status na --na-reason WHY")
	case f.profile != "" && f.status == "":
		return cli.Usagef("--profile (the run's part) needs --status")
	case f.profile == "" && f.status != "" && (f.state != "" || f.base != ""):
		return cli.Usagef("an adapter's record has status ok: --status goes with --profile (the run's part)")
	}
	for _, n := range adapterOnly {
		if changed(n) && (f.state == "" || f.base != "") {
			return cli.Usagef("--%s builds the adapter's part: it needs --state (and no --base)", n)
		}
	}
	for _, n := range runOnly {
		if changed(n) && f.profile == "" {
			return cli.Usagef("--%s is of the run's part: it needs --profile", n)
		}
	}
	return nil
}

// readBase reads an adapter's meta.
func readBase(name string) (schema.Meta, error) {
	fh, err := os.Open(name)
	if err != nil {
		return schema.Meta{}, cli.UsageError{Err: fmt.Errorf("--base: %w", err)}
	}
	defer fh.Close()
	m, err := schema.DecodeMeta(fh, name)
	if err != nil {
		return schema.Meta{}, cli.UsageError{Err: fmt.Errorf("--base: %w", err)}
	}
	return *m, nil
}

// adapterMeta builds an adapter's record from the flags and the state
// directory.
func adapterMeta(ctx context.Context, f metaFlags, stderr io.Writer) (schema.Meta, error) {
	a := product.Adapter{Name: f.product, Inputs: product.Inputs{Version: f.version, Mode: product.ModeNative}}
	entry, flag := f.entry, "--entry"
	if entry == "" {
		entry, flag = f.product, "--product"
	}
	p, known := products.Lookup(entry)
	if !known {
		return schema.Meta{}, cli.Usagef("%s %q: no entry in products (want %s)", flag, entry, strings.Join(products.Names(), ", "))
	}
	a.Product = p
	if err := fillAdapter(&a, f); err != nil {
		return schema.Meta{}, err
	}
	if err := runValues(ctx, &a, f.state, stderr); err != nil {
		return schema.Meta{}, err
	}
	m, err := product.AdapterMeta(a)
	if err != nil {
		return schema.Meta{}, cli.UsageError{Err: err}
	}
	return m, nil
}

// fillAdapter reads the key=value flags and the files into a.
func fillAdapter(a *product.Adapter, f metaFlags) error {
	var err error
	if a.Inputs.Params, err = pairs("param", f.params, nil); err != nil {
		return err
	}
	if a.Endpoints, err = pairs("endpoint", f.endpoints, scenarioNames()); err != nil {
		return err
	}
	if a.ScenarioNA, err = pairs("scenario-na", f.scenarioNA, scenarioNames()); err != nil {
		return err
	}
	if a.Inputs.Config, err = config(f); err != nil {
		return err
	}
	if a.Pools, err = readPools(filepath.Join(f.state, "pools.jsonl")); err != nil {
		return err
	}
	for _, name := range []string{"facts.json", "listeners.json"} {
		facts, err := readFacts(filepath.Join(f.state, name))
		if err != nil {
			return err
		}
		a.Facts = append(a.Facts, facts...)
	}
	return nil
}

// pairs parses KEY=VALUE flags; with names, every key must be one of them.
func pairs(flag string, vals, names []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		switch {
		case !ok || k == "":
			return nil, cli.Usagef("--%s %q: want KEY=VALUE", flag, v)
		case names != nil && !slices.Contains(names, k):
			return nil, cli.Usagef("--%s %q: unknown scenario %q (want one of %s)", flag, v, k, strings.Join(names, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, cli.Usagef("--%s: %s given twice", flag, k)
		}
		out[k] = val
	}
	return out, nil
}

// config reads the generic adapter's configuration entries.
func config(f metaFlags) (product.Config, error) {
	c := product.Config{Notes: f.notes, Settings: f.settings}
	for _, s := range f.settings {
		if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
			return c, cli.Usagef("--setting %q: want KEY=VALUE", s)
		}
	}
	for _, d := range f.deviations {
		what, why, ok := strings.Cut(d, " | ")
		if !ok {
			return c, cli.Usagef("--deviation %q: want 'WHAT | WHY'", d)
		}
		c.Deviations = append(c.Deviations, schema.Note{What: what, Why: why})
	}
	for _, l := range f.sources {
		what, url, ok := strings.Cut(l, " | ")
		if !ok {
			return c, cli.Usagef("--config-source %q: want 'WHAT | URL'", l)
		}
		c.Sources = append(c.Sources, schema.Link{What: what, URL: url})
	}
	return c, nil
}

// scenarioNames are the benchmark's scenarios (schema.Scenarios but the
// custom request).
func scenarioNames() []string { return product.Scenarios() }

// readPools reads STATE/pools.jsonl (one schema.PoolInfo a line); a
// missing or empty file is no pools.
func readPools(name string) ([]schema.PoolInfo, error) {
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var pools []schema.PoolInfo
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p schema.PoolInfo
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, cli.UsageError{Err: fmt.Errorf("%s:%d: %w", name, line, err)}
		}
		pools = append(pools, p)
	}
	return pools, sc.Err()
}

// readFacts reads a readback record (idpbench.facts/v1); a missing or
// empty file is no facts.
func readFacts(name string) ([]schema.Fact, error) {
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) || (err == nil && len(b) == 0) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var f schema.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, cli.UsageError{Err: fmt.Errorf("%s: %w", name, err)}
	}
	if err := schema.CheckVersion(name, schema.FactsV1, f.Schema); err != nil {
		return nil, cli.UsageError{Err: err}
	}
	return f.Facts, nil
}

// runPart reads the run flags.
func runPart(f metaFlags) (product.Run, error) {
	r := product.Run{Status: f.status, NAReason: f.naReason, Profile: f.profile, Placement: f.placement, End: time.Now().UTC().Truncate(time.Second)}
	var err error
	if f.start != "" {
		if r.Start, err = time.Parse(time.RFC3339, f.start); err != nil {
			return r, cli.Usagef("--start: %v", err)
		}
	}
	if f.end != "" {
		if r.End, err = time.Parse(time.RFC3339, f.end); err != nil {
			return r, cli.Usagef("--end: %v", err)
		}
	}
	if r.Unrun, err = unrun(f.scenarios); err != nil {
		return r, err
	}
	p := f.placement
	switch {
	case p.Mode != schema.PlacementPinned && p.Mode != schema.PlacementShared:
		return r, cli.Usagef("--placement-mode %q: want %s or %s", p.Mode, schema.PlacementPinned, schema.PlacementShared)
	case p.DriverCPUs == "" || p.ServerCPUs == "" || p.HostCPUs < 1:
		return r, cli.Usagef("the run's part needs --driver-cpus, --server-cpus and --host-cpus (>= 1)")
	}
	switch rd := f.rounds; {
	case rd.Count == 0 && rd.Order == "":
	case rd.Count == 1 && (rd.Order == "" || rd.Order == schema.RoundsSingle):
		r.Rounds = &schema.Rounds{Count: 1, Order: schema.RoundsSingle}
	case rd.Seed != 0 && rd.Order != schema.RoundsRandom:
		return r, cli.Usagef("--round-seed %d: only with --round-order %s", rd.Seed, schema.RoundsRandom)
	case rd.Count > 1 && (rd.Order == schema.RoundsInterleaved || rd.Order == schema.RoundsRandom):
		r.Rounds = &schema.Rounds{Count: rd.Count, Order: rd.Order, Seed: rd.Seed}
	case rd.Count > 1:
		return r, cli.Usagef("--round-order %q: with --rounds %d want %s or %s", rd.Order, rd.Count, schema.RoundsInterleaved, schema.RoundsRandom)
	default:
		return r, cli.Usagef("--rounds %d --round-order %q: want --rounds >= 1 (and --round-order %s when > 1)", rd.Count, rd.Order, schema.RoundsInterleaved)
	}
	return r, nil
}

// unrun returns the scenarios outside list (all of them run when list is
// empty).
func unrun(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	names := scenarioNames()
	in := strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == ',' })
	for _, s := range in {
		if !slices.Contains(names, s) {
			return nil, cli.Usagef("--scenarios: unknown scenario %q (want some of %s)", s, strings.Join(names, ", "))
		}
	}
	var out []string
	for _, s := range names {
		if !slices.Contains(in, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// writeMeta writes m as indented JSON to name (atomically; - is stdout).
func writeMeta(m schema.Meta, name string, stdout io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return err
	}
	return atomicfile.Write(name, 0o644, b.Bytes(), stdout)
}
