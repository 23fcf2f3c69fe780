package product

import (
	"fmt"
	"maps"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// Adapter is what an adapter's meta is built from: the product's part and
// what the adapter knows of the run.
type Adapter struct {
	Name       string  // the product's name in the results; empty: Product.Name
	Product    Product // its entry
	Inputs     Inputs
	Compose    *Compose          // compose mode's additions; nil when native
	ScenarioNA map[string]string // the adapter's N/A reasons, over Product.NA
	Endpoints  map[string]string // scenario -> URL measured
	Pools      []schema.PoolInfo // the pools minted (pools.jsonl)
	Facts      []schema.Fact     // read back: after setup (facts.json), then after the last start (listeners.json)
	Database   map[string]string // PostgreSQL's version and settings; nil when the product used none
}

// AdapterMeta returns the meta an adapter prints (status ok): the
// product's part, compose mode's additions, then the run's N/A reasons,
// endpoints, pools, database and facts.
func AdapterMeta(a Adapter) (schema.Meta, error) {
	if err := a.Product.Check(a.Inputs); err != nil {
		return schema.Meta{}, err
	}
	m := a.Product.Part(a.Inputs)
	if a.Compose != nil {
		a.Compose.apply(&m)
	}
	name := a.Name
	if name == "" {
		name = a.Product.Name
	}
	m.Schema, m.Product, m.ProductVersion, m.Status = schema.MetaV1, name, a.Inputs.Version, "ok"
	m.ScenarioNA = merged(a.Product.NA, a.ScenarioNA)
	m.Endpoints = a.Endpoints
	m.Pools = a.Pools
	m.Database = a.Database
	m.Facts = append(m.Facts, a.Facts...)
	for s := range m.Endpoints {
		if why, na := m.ScenarioNA[s]; na {
			return schema.Meta{}, fmt.Errorf("scenario %s has an endpoint and is N/A (%s)", s, why)
		}
	}
	return m, nil
}

// NA returns the bare record of a product that did not run.
func NA(product, version, why string) schema.Meta {
	return schema.Meta{Schema: schema.MetaV1, Product: product, ProductVersion: version, Status: "na", NAReason: why}
}

// UnrunReason is the N/A reason of a scenario outside the run's list.
const UnrunReason = "not in this run's scenario list (IDPBENCH_SCENARIOS)"

// Run is run-comparison.sh's part of a meta: how the product's run ended
// and where it ran.
type Run struct {
	Status     string    // "ok" | "na"
	NAReason   string    // why, with status na
	Start, End time.Time // the product's run; a zero Start is not recorded (unknown)
	Profile    string    // quick | full
	// Unrun are the scenarios outside the run's list; the adapter's own
	// reason for one wins.
	Unrun     []string
	Placement schema.Placement
	Rounds    *schema.Rounds // nil: not recorded
}

// Apply completes m with the run's part.
func (r Run) Apply(m *schema.Meta) {
	m.Status, m.End = r.Status, r.End
	if !r.Start.IsZero() {
		m.Start = r.Start
	}
	if r.NAReason != "" {
		m.NAReason = r.NAReason
	}
	unrun := map[string]string{}
	for _, s := range r.Unrun {
		unrun[s] = UnrunReason
	}
	m.ScenarioNA = merged(unrun, m.ScenarioNA)
	m.Notes = append(m.Notes, "profile: "+r.Profile)
	p := r.Placement
	m.Placement = &p
	m.Rounds = r.Rounds
}

// merged returns base with over's entries added or replacing; nil when both
// are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}
