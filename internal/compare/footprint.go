package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// Footprint is one product's cold starts and memory on both sides, as the
// report gives them: one cold start per mode, and the memory as the median
// of the sampler's records in the steady windows. Single readings, so side
// by side with their change and no test (--footprint).
type Footprint struct {
	Product  string
	Old, New FootprintSide
}

// FootprintSide is one side's readings of a product.
type FootprintSide struct {
	ColdA, ColdB ColdReading
	IdPMiB       model.Figure // IdP memory at steady state, median, MiB
	StackMiB     model.Figure // IdP + PostgreSQL at the same instants, median, MiB
	MemKind      string       // what IdPMiB measures: PSS, RSS or cgroup ("" without figures)
}

// ColdReading is one cold start: seconds to ready and the peak, or why not.
type ColdReading struct {
	Seconds  float64
	PeakMiB  float64
	PeakKind string // "RSS" (the process tree) or "cgroup" (the containers)
	NA       string
}

// Footprints pairs the products of old and new, in OLD's order then NEW's.
func Footprints(old, new Side) []Footprint {
	o, n := footprintSides(old.Inputs), footprintSides(new.Inputs)
	var products []string
	for _, m := range []*sideFootprints{o, n} {
		for _, p := range m.order {
			if !slices.Contains(products, p) {
				products = append(products, p)
			}
		}
	}
	var out []Footprint
	for _, p := range products {
		out = append(out, Footprint{Product: p, Old: o.side(p), New: n.side(p)})
	}
	return out
}

type sideFootprints struct {
	order []string
	by    map[string]FootprintSide
}

func (s *sideFootprints) side(p string) FootprintSide {
	if f, ok := s.by[p]; ok {
		return f
	}
	none := "not in this run"
	return FootprintSide{ColdA: ColdReading{NA: none}, ColdB: ColdReading{NA: none},
		IdPMiB: model.Figure{NA: none}, StackMiB: model.Figure{NA: none}}
}

func footprintSides(in *model.Inputs) *sideFootprints {
	r := model.Build(in, model.Options{})
	s := &sideFootprints{by: map[string]FootprintSide{}}
	for _, c := range r.Cold {
		s.order = append(s.order, c.Product)
		f := s.by[c.Product]
		f.ColdA, f.ColdB = coldReading(c.A), coldReading(c.B)
		s.by[c.Product] = f
	}
	for _, res := range r.Resources {
		if !slices.Contains(s.order, res.Product) {
			s.order = append(s.order, res.Product)
		}
		f := s.by[res.Product]
		f.IdPMiB, f.StackMiB, f.MemKind = res.IdPRSS, res.StackRSS, res.IdPMem
		if res.NA != "" {
			f.IdPMiB, f.StackMiB = model.Figure{NA: res.NA}, model.Figure{NA: res.NA}
		}
		s.by[res.Product] = f
	}
	return s
}

func coldReading(c model.Coldstart) ColdReading {
	if c.NA != "" || c.File.Coldstart == nil {
		return ColdReading{NA: cmp.Or(c.NA, "no record")}
	}
	rec := c.File.Coldstart
	return ColdReading{Seconds: rec.SecondsToReady, PeakMiB: float64(rec.PeakRSSBytes) / (1 << 20),
		PeakKind: cmp.Or(rec.PeakMeasuredAs, "RSS")}
}

// writeFootprints renders the footprint table in Markdown.
func writeFootprints(b *strings.Builder, fs []Footprint) {
	b.WriteString("\n### Cold start and memory\n\n")
	b.WriteString("One cold start per mode and side (A: fresh database; B: restart), and the IdP's memory as the median of " +
		"the sampler's records in the steady windows (the stack: IdP and PostgreSQL at the same instants): single readings, " +
		"so a change here has no interval and no test. Memory is RSS or PSS of a process tree, or a container's cgroup " +
		"memory (usage minus inactive page cache): where the two sides measure differently, the change is that of two " +
		"measures, and the cell says which.\n\n")
	b.WriteString("| product | A s OLD → NEW | Δ | A peak MiB OLD → NEW | B s OLD → NEW | Δ | B peak MiB OLD → NEW | IdP MiB OLD → NEW | Δ | stack MiB OLD → NEW | Δ |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, f := range fs {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(f.Product),
			coldCells(f.Old.ColdA, f.New.ColdA), peakCell(f.Old.ColdA, f.New.ColdA),
			coldCells(f.Old.ColdB, f.New.ColdB), peakCell(f.Old.ColdB, f.New.ColdB),
			memCells(f.Old.IdPMiB, f.New.IdPMiB, f.Old.MemKind, f.New.MemKind),
			memCells(f.Old.StackMiB, f.New.StackMiB, f.Old.MemKind, f.New.MemKind))
	}
}

// coldCells: "OLD → NEW | Δ" of the seconds to ready.
func coldCells(o, n ColdReading) string {
	if o.NA != "" || n.NA != "" {
		return naPair(o.NA, n.NA) + " | –"
	}
	return steps.FormatMS(o.Seconds) + " → " + steps.FormatMS(n.Seconds) + " | " + change(o.Seconds, n.Seconds)
}

// peakCell: "OLD → NEW" of the peaks, each marked with what it measures.
func peakCell(o, n ColdReading) string {
	if o.NA != "" || n.NA != "" {
		return "–"
	}
	return steps.SigOrInt(o.PeakMiB, 3) + " (" + o.PeakKind + ") → " + steps.SigOrInt(n.PeakMiB, 3) + " (" + n.PeakKind + ")"
}

// memCells: "OLD → NEW | Δ" of a memory median, each marked with its measure.
func memCells(o, n model.Figure, ok, nk string) string {
	if !o.OK || !n.OK {
		return naPair(o.NA, n.NA) + " | –"
	}
	return steps.SigOrInt(o.Value, 3) + " (" + ok + ") → " + steps.SigOrInt(n.Value, 3) + " (" + nk + ") | " + change(o.Value, n.Value)
}

func naPair(o, n string) string {
	side := func(s string) string {
		if s == "" {
			return "ok"
		}
		return "N/A: " + mdCell(s)
	}
	return side(o) + " → " + side(n)
}

// change is NEW against OLD in percent, or "–" when OLD is 0.
func change(o, n float64) string {
	if o == 0 {
		return "–"
	}
	return formatPct(100 * (n - o) / o)
}
