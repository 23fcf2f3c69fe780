// Package steps is the arithmetic of step records (idpbench.step/v1) that
// the writing side and the report share: merging agents' steps exactly
// (Merge, EncodeStep), the steady-state rule and the plateau (Qualifies,
// SelectSteady, SelectSteadyLevel, Plateau), the spread and median of a
// level's windows (SpreadOf, SamplesIn), whether a rate-mode window kept up
// (Sustained) and measured a latency at all (ShareNA), the number formats
// the figures are written in (FormatQPS, FormatMS, FormatPct) and the one
// line a step of aggregate summary (WriteSummary). The ladder, k8sstep, the
// model and the renderers use it.
package steps

import (
	"cmp"
	"path/filepath"

	"github.com/idpbench/idpbench/internal/schema"
)

// File is one step record and where it came from.
type File struct {
	Path string // file path as walked ("-" for stdin)
	Step *schema.Step
}

// Product is the step's product: the record's, else the one its path
// names (DirProduct), as records from before the field have none.
func (f File) Product() string { return cmp.Or(f.Step.Product, DirProduct(f.Path)) }

// DirProduct is the product a record's path names: its directory's name
// (results/RUN/PRODUCT/...), "unknown" for stdin.
func DirProduct(path string) string {
	if path == "-" {
		return "unknown"
	}
	return filepath.Base(filepath.Dir(path))
}

// Phase labels of a step ("phase" label). Steps without the label are ladder steps.
const (
	PhaseLadder   = "ladder"
	PhaseGCJitter = "gcjitter"
	// PhaseShare is a rate-mode window at a fixed share of the cell's
	// capacity (label share=PERCENT; the report's shares.go).
	PhaseShare = "share"
	// PhaseTwin is the A/A twin of a cell's window in an interleaved
	// round: the product measured again in the same round as if it were
	// another (label twin=1; the report's A/A check, never its capacity).
	PhaseTwin = "twin"
)
