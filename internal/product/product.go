// Package product is what a product is for the benchmark, as data (the
// products themselves are in products/NAME, registered in products):
// the settings idpbench gives it, where that configuration comes from,
// every deviation from the product's defaults with the reason, notes, the
// product's own known limitations and the scenarios it cannot run, with
// why; and what the adapter asks about a run (Answers: each scenario's URL,
// loadstep arguments, pool and lifetime; setup's, readback's and the start's
// arguments; the configuration file), from the values the adapter recorded
// in its state directory (State). The adapters (products/<name>/adapter)
// install, start and stop the product; what they applied or read for the
// meta (a heap, a JDK, a base URL) comes in as Inputs, so a fact read at run
// time never becomes a constant here. AdapterMeta assembles a product's
// idpbench.meta/v1 record from it.
package product

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/jdk"
	"github.com/idpbench/idpbench/internal/readback"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// Product is one product's entry.
type Product struct {
	Name string
	// NA maps a scenario to why the product cannot run it anywhere: a
	// reason that does not depend on the run.
	NA map[string]string
	// Params are the run's values the product's part is built from; every
	// one is required.
	Params []Param
	// Part returns the product's part of the meta: Settings,
	// ConfigSources, Deviations, Notes and Known.
	Part func(in Inputs) schema.Meta
	// TakesConfig: the part takes Inputs.Config (the generic adapter).
	TakesConfig bool
	// Answers answer the adapter about a run from its state: the scenario
	// table, readback's, setup's and the start's arguments, the
	// configuration file. nil: the adapter answers itself (the generic one).
	Answers *Answers
	// Ask answers a scenario of a run in-process when the scenario table
	// cannot (the generic adapter's, from its configuration file and
	// discovery document); nil: Answers' table answers (Product.Answer).
	Ask Asker
	// MetaParams are the run's values of Params, read from the state up
	// recorded (provision meta's --param K=V); nil: none.
	MetaParams func(st *State) []string
	// Meta are the name a run's meta records and provision meta's
	// arguments, in place of the entry's name and MetaParams' (the generic
	// adapter's: its configuration's NAME, entries and each scenario's N/A
	// reason or endpoint); nil: those.
	Meta func(stateDir string) (name string, args []string, err error)
	// Fresh: the adapter starts the product again before a load step
	// (its product_fresh: the reference OP, which keeps what it issues in
	// memory); the ladder asks its fresh entry point only then.
	Fresh bool
	// Samples are the sampler's arguments for a run and a warning, when
	// the state's (State.SampleArgs) are not (the generic adapter's).
	Samples func(stateDir string) (args []string, warning string, err error)
	// JDK is the JDK the product runs on (provision jdk); nil: none.
	JDK *jdk.Need
	// ReadFacts reads the product's configuration back from the running
	// product and its database (cmd/readback, through readback.Config.Reads);
	// nil: readback knows nothing to read of it, and ReadFactsNA says why.
	ReadFacts   func(ctx context.Context, r *readback.Reader) error
	ReadFactsNA string
	// ReadFactsFrom says, for readback's --help, which of readback's
	// flags ReadFacts reads and what it reads through each, e.g.
	// "--binary (the example server's Go build info)".
	ReadFactsFrom string
	// InDefaultRun: a run without --only measures it (run-comparison.sh),
	// in the registry's order.
	InDefaultRun bool
	// Reference: the reference OP, this machine's protocol ceiling rather
	// than a product of the comparison; the report's first screen shows it
	// apart (report.Options.References).
	Reference bool
	// NAByDesign are the reasons this product's install fails by design on
	// some machines, each the start of the reason its adapter gives (and
	// found verbatim in it: TestContract): the run shows its rows N/A and
	// exits 0, as for Zitadel with neither its binary nor a Docker engine
	// here. Any other failure of a product a run was asked for ends the run
	// with exit 1 (internal/run).
	NAByDesign Reasons
	// Provision is the product's own "provision NAME" subcommand (setup
	// through its API); nil: none.
	Provision *cli.Subcommand
	// Docs is the product's page of verified facts, from the repository
	// root (docs/products/NAME.md); it names the version the adapter pins.
	Docs string
	// ComposeFile is the product's compose file, from the repository root,
	// which compose mode (scripts/lib/compose.sh) runs and deploy/compose's
	// tests check; empty: the product has no compose mode.
	ComposeFile string
	// ServerMetrics are the series of the product's own metrics that count
	// each scenario's requests (the report's Server side table), or why it
	// has none; empty: none known.
	ServerMetrics servermetrics.Product
}

// Reasons are the starts of failure reasons a product declares.
type Reasons []string

// Declares reports whether reason starts with one of rs.
func (rs Reasons) Declares(reason string) bool {
	for _, r := range rs {
		if r != "" && strings.HasPrefix(reason, r) {
			return true
		}
	}
	return false
}

// Param is one input of a product's part.
type Param struct {
	Name string
	Doc  string // what it is and where the adapter takes it from
}

// Modes of a product's run (Inputs.Mode).
const (
	ModeNative  = "native"
	ModeCompose = "compose"
)

// Inputs are the values of one run a product's part is built from.
type Inputs struct {
	Version string            // the product version the adapter runs
	Params  map[string]string // Param name -> value
	Mode    string            // ModeNative | ModeCompose
	Config  Config            // a configuration file's own entries (TakesConfig only)
}

// Config is what a configuration file adds to the part, in its order.
type Config struct {
	Notes      []string
	Deviations []schema.Note
	Sources    []schema.Link
	Settings   []string // key=value; a later key replaces an earlier one and the part's own
}

func (c Config) empty() bool {
	return len(c.Notes)+len(c.Deviations)+len(c.Sources)+len(c.Settings) == 0
}

// P returns the parameter name; Check has made sure it is there.
func (in Inputs) P(name string) string { return in.Params[name] }

// Compose reports whether the product runs in compose mode.
func (in Inputs) Compose() bool { return in.Mode == ModeCompose }

// Check reports the first parameter p needs that in lacks, or one in
// has that p does not take, and an unknown mode.
func (p Product) Check(in Inputs) error {
	want := map[string]bool{}
	for _, prm := range p.Params {
		want[prm.Name] = true
		if _, ok := in.Params[prm.Name]; !ok {
			return fmt.Errorf("%s needs --param %s=VALUE (%s)", p.Name, prm.Name, prm.Doc)
		}
	}
	var extra []string
	for k := range in.Params {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		return fmt.Errorf("%s takes no --param %s", p.Name, extra[0])
	}
	if !p.TakesConfig && !in.Config.empty() {
		return fmt.Errorf("%s takes no --note, --deviation, --config-source or --setting (the generic adapter's)", p.Name)
	}
	if in.Mode != ModeNative && in.Mode != ModeCompose {
		return fmt.Errorf("mode %q: want %s or %s", in.Mode, ModeNative, ModeCompose)
	}
	return nil
}
