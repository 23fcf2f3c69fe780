package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products"
)

// Run is a comparison's run directory as aggregate reads it: its records by
// path relative to Dir, the main table and COMPARISON.md.
type Run struct {
	Dir        string
	Cells      []model.CellRow // the main table as `aggregate steady` writes it, File relative to Dir
	Steps      map[string]*schema.Step
	Metas      map[string]*schema.Meta
	Coldstarts map[string]*schema.Coldstart
	Knees      map[string]*schema.Knee
	Samples    map[string]int // sampler record files: their records
	Phases     int            // phase records in phases.jsonl
	Comparison string         // COMPARISON.md
}

// LoadRun reads the run directory dir with internal/report's loader and
// builds its report.
func LoadRun(ctx context.Context, dir string) (*Run, error) {
	in, err := model.Load(ctx, []string{dir}, nil, func(string) {})
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Steps: map[string]*schema.Step{}, Metas: map[string]*schema.Meta{},
		Coldstarts: map[string]*schema.Coldstart{}, Knees: map[string]*schema.Knee{}, Samples: map[string]int{}}
	rel := func(path string) string {
		p, err := filepath.Rel(dir, path)
		if err != nil {
			return path
		}
		return p
	}
	r.Cells = model.CellRows(model.Build(in, model.Options{ServerMetrics: products.ServerMetrics}))
	for i := range r.Cells {
		r.Cells[i].File = rel(r.Cells[i].File)
	}
	for _, f := range in.Steps {
		r.Steps[rel(f.Path)] = f.Step
	}
	for _, f := range in.Metas {
		r.Metas[rel(f.Path)] = f.Meta
	}
	for _, f := range in.Coldstarts {
		r.Coldstarts[rel(f.Path)] = f.Coldstart
	}
	for _, f := range in.Knees {
		r.Knees[rel(f.Path)] = f.Knee
	}
	for _, f := range in.Samples {
		r.Samples[rel(f.Path)] += len(f.Samples)
	}
	for _, f := range in.Phases {
		if rel(f.Path) == schema.PhasesFile {
			r.Phases += len(f.Phases)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "COMPARISON.md"))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	r.Comparison = string(md)
	return r, nil
}

// Clone returns a copy of r whose maps and cells can be changed without
// changing r's; the records they point to are shared.
func (r *Run) Clone() *Run {
	c := *r
	c.Cells = slices.Clone(r.Cells)
	c.Steps, c.Metas, c.Coldstarts = maps.Clone(r.Steps), maps.Clone(r.Metas), maps.Clone(r.Coldstarts)
	c.Knees, c.Samples = maps.Clone(r.Knees), maps.Clone(r.Samples)
	return &c
}

// cells returns product's cells of scenario id (S1, S2l ...).
func (r *Run) cells(product, id string) []model.CellRow {
	var out []model.CellRow
	for _, c := range r.Cells {
		if c.Product == product && c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

// meta is the meta record of product, PRODUCT/meta.json.
func (r *Run) meta(product string) (*schema.Meta, error) {
	m := r.Metas[product+"/meta.json"]
	if m == nil {
		return nil, fmt.Errorf("%s: no meta record %s", product, filepath.Join(r.Dir, product, "meta.json"))
	}
	return m, nil
}

// status is the status of the record at rel (a cold start or a step), ""
// when there is none.
func (r *Run) status(rel string) string {
	if c := r.Coldstarts[rel]; c != nil {
		return c.Status
	}
	if s := r.Steps[rel]; s != nil {
		return s.Status
	}
	return ""
}
