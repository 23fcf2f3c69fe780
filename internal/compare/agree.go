package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// Agreement is how closely two runs of one methodology agree on the numbers
// their reports show: each cell's steady throughput, each side at its own
// steady level (a third party reproducing a report compares what it
// reports, wherever each run's steady state fell).
type Agreement struct {
	Within  float64 // the bound, percent
	Cells   []AgreeCell
	Agree   int // cells within the bound
	Total   int // cells with a steady state on both sides
	SameLvl int // of Total, cells whose steady level is the same
	// MedianPct is the median of the cells' |DeltaPct|, percent (NaN
	// without cells).
	MedianPct float64
	// The same for requests per IdP CPU-second, over the cells whose
	// efficiency both sides' reports show.
	EffAgree, EffTotal int
	EffMedianPct       float64
	// The same for the steady throughput at one host speed (Δ qps with the
	// Δ host speed taken out), over the cells whose both sides have a
	// host probe.
	HostAgree, HostTotal int
	HostMedianPct        float64
	// Capacity is the agreement of the capacities (model.Capacity): raw,
	// and at one host speed (both at OLD's reference probe).
	Capacity, CapacityAdjusted CapacityAgreement
	// Shares is the agreement of the P99 at each share of capacity both
	// runs measured (model.ShareLatency), within ±LatencyWithinPct, by
	// share.
	Shares []ShareAgreement
	// Pairs is the agreement of the verdicts, pair by pair (AgreePairs);
	// nil when it was not asked.
	Pairs *PairAgreement
}

// LatencyWithinPct is the bound a latency at a share of capacity is
// checked against in Agreement.Shares (the issue's ±10%).
const LatencyWithinPct = 10.0

// ShareAgreement is how two runs agree on the P99 at one share of each
// cell's own capacity.
type ShareAgreement struct {
	Share int
	CapacityAgreement
	Cells []ShareCell
	// Skipped is the cells measured at this share on both sides whose
	// P99 is not compared: one side has none (a share not sustained has
	// no latency: its corrected latency is a queue's length), with why.
	Skipped []ShareSkip
}

// ShareSkip is a cell at a share left out of the agreement, and why.
type ShareSkip struct {
	Product, Scenario string
	Why               string
}

// ShareCell is one cell's P99 at a share on both sides.
type ShareCell struct {
	Product, Scenario string
	Old, New          model.Interval
	Pct               float64 // NaN without both
	Honest            bool
}

// CapacityAgreement is how two runs agree on one kind of capacity figure.
type CapacityAgreement struct {
	Agree, Total int     // cells within the bound, cells with the figure on both sides
	MedianPct    float64 // median |Δ|, percent; NaN without cells
	// Narrow of Intervals: the capacities (of both runs) whose 95%
	// interval is at most ±NarrowPct of the median, of those with a figure.
	Narrow, Intervals int
	// Honest of Paired: the cells whose two intervals exist and whose
	// difference lies within √(h₁² + h₂²) of the two half-widths.
	Honest, Paired int
}

// NarrowPct is the half-width (percent of the median) under which a
// capacity interval counts as narrow in CapacityAgreement.
const NarrowPct = 5.0

// AgreeCell is one cell of an Agreement.
type AgreeCell struct {
	Row      Row
	DeltaPct float64 // NEW's steady median qps against OLD's, percent; NaN without both
	Within   bool
	// CapPct, CapAdjPct: NEW's capacity against OLD's, raw and at OLD's
	// reference host speed, percent; NaN without both. CapHonest,
	// CapAdjHonest: the difference lies within the combined half-widths
	// (false also without both intervals).
	CapPct, CapAdjPct       float64
	CapHonest, CapAdjHonest bool
	// EffDeltaPct: NEW's requests per IdP CPU-second against OLD's,
	// percent; NaN where either report has no figure.
	EffDeltaPct float64
	EffWithin   bool
	// HostDeltaPct is how much faster NEW's host ran than OLD's in the
	// cell's windows, percent: OLD's host probe median over NEW's, minus 1
	// (the probe is CPU time for fixed work: less is faster). A Δ qps that
	// follows it is the machine's, not the product's. NaN where either side
	// recorded no probe.
	HostDeltaPct float64
	// EqualHostDeltaPct is DeltaPct at one host speed: NEW's qps over OLD's
	// divided by NEW's host speed over OLD's, minus 1, percent; NaN without
	// HostDeltaPct. Throughput follows the probe about one to one on a
	// shared machine, so this is the difference the products made.
	EqualHostDeltaPct float64
	EqualHostWithin   bool
	Why               string // why the cell has no figure ("no steady state in NEW")
}

// Agree checks every steady-mode row of rows against a bound of within
// percent. Rows without Reported (--all-steps) and N/A rows are left out.
func Agree(rows []Row, within float64) Agreement {
	a := Agreement{Within: within}
	for _, row := range rows {
		rep := row.Reported
		if rep == nil || row.Status == StatusNA {
			continue
		}
		c := AgreeCell{Row: row, DeltaPct: math.NaN(), EffDeltaPct: math.NaN(), HostDeltaPct: math.NaN(), EqualHostDeltaPct: math.NaN(),
			CapPct: math.NaN(), CapAdjPct: math.NaN()}
		switch {
		case rep.Old == nil && rep.New == nil:
			c.Why = "no steady state in either run"
		case rep.Old == nil:
			c.Why = "no steady state in OLD"
		case rep.New == nil:
			c.Why = "no steady state in NEW"
		default:
			c.DeltaPct = 100 * (rep.New.QPS.Median/rep.Old.QPS.Median - 1)
			c.Within = math.Abs(c.DeltaPct) <= within
			a.Total++
			if c.Within {
				a.Agree++
			}
			if rep.OldLevel == rep.NewLevel {
				a.SameLvl++
			}
			if rep.OldProbe.N > 0 && rep.NewProbe.N > 0 && rep.NewProbe.Median > 0 {
				c.HostDeltaPct = 100 * (rep.OldProbe.Median/rep.NewProbe.Median - 1)
				c.EqualHostDeltaPct = 100 * ((1+c.DeltaPct/100)/(1+c.HostDeltaPct/100) - 1)
				c.EqualHostWithin = math.Abs(c.EqualHostDeltaPct) <= within
				a.HostTotal++
				if c.EqualHostWithin {
					a.HostAgree++
				}
			}
			if rep.OldCap != nil && rep.NewCap != nil {
				c.CapPct, c.CapHonest = a.Capacity.add(rep.OldCap.Raw, rep.NewCap.Raw, within)
				c.CapAdjPct, c.CapAdjHonest = a.CapacityAdjusted.add(rep.OldCap.Adjusted, rep.NewCapAtOld, within)
			}
			if rep.OldEff.OK && rep.NewEff.OK && rep.OldEff.Value > 0 {
				c.EffDeltaPct = 100 * (rep.NewEff.Value/rep.OldEff.Value - 1)
				c.EffWithin = math.Abs(c.EffDeltaPct) <= within
				a.EffTotal++
				if c.EffWithin {
					a.EffAgree++
				}
			}
		}
		a.Cells = append(a.Cells, c)
	}
	a.MedianPct = medianAbs(a.Cells, func(c AgreeCell) float64 { return c.DeltaPct })
	a.EffMedianPct = medianAbs(a.Cells, func(c AgreeCell) float64 { return c.EffDeltaPct })
	a.HostMedianPct = medianAbs(a.Cells, func(c AgreeCell) float64 { return c.EqualHostDeltaPct })
	a.Capacity.MedianPct = medianAbs(a.Cells, func(c AgreeCell) float64 { return c.CapPct })
	a.CapacityAdjusted.MedianPct = medianAbs(a.Cells, func(c AgreeCell) float64 { return c.CapAdjPct })
	a.Shares = agreeShares(a.Cells)
	return a
}

// agreeShares is the agreement of the P99 at every share a cell has on
// both sides, by share.
func agreeShares(cells []AgreeCell) []ShareAgreement {
	var out []ShareAgreement
	for _, c := range cells {
		rep := c.Row.Reported
		for _, o := range rep.OldShares {
			i := slices.IndexFunc(rep.NewShares, func(n model.ShareLatency) bool { return n.Share == o.Share })
			if i < 0 {
				continue
			}
			j := slices.IndexFunc(out, func(s ShareAgreement) bool { return s.Share == o.Share })
			if j < 0 {
				out, j = append(out, ShareAgreement{Share: o.Share}), len(out)
			}
			if why := skipWhy(o, rep.NewShares[i]); why != "" {
				out[j].Skipped = append(out[j].Skipped, ShareSkip{Product: c.Row.Product, Scenario: c.Row.Scenario, Why: why})
				continue
			}
			sc := ShareCell{Product: c.Row.Product, Scenario: c.Row.Scenario, Old: o.P99, New: rep.NewShares[i].P99}
			sc.Pct, sc.Honest = out[j].add(sc.Old, sc.New, LatencyWithinPct)
			out[j].Cells = append(out[j].Cells, sc)
		}
	}
	slices.SortFunc(out, func(a, b ShareAgreement) int { return a.Share - b.Share })
	for i := range out {
		pcts := make([]float64, len(out[i].Cells))
		for j, c := range out[i].Cells {
			pcts[j] = c.Pct
		}
		out[i].MedianPct = medianAbsOf(pcts)
	}
	return out
}

// skipWhy says why a cell's P99 at a share is not compared ("" when it
// is): the side(s) without one, and their reasons.
func skipWhy(o, n model.ShareLatency) string {
	var why []string
	if o.NA != "" {
		why = append(why, "OLD "+o.NA)
	}
	if n.NA != "" {
		why = append(why, "NEW "+n.NA)
	}
	return strings.Join(why, "; ")
}

// add counts one cell's two capacities (OLD's o, NEW's n): its Δ percent
// (NaN when a side has no median) and whether the difference lies within
// the combined half-widths of the two intervals.
func (ca *CapacityAgreement) add(o, n model.Interval, within float64) (float64, bool) {
	for _, iv := range []model.Interval{o, n} {
		if iv.N > 0 && iv.Center > 0 {
			ca.Intervals++
			if iv.OK() && iv.HalfPct() <= NarrowPct {
				ca.Narrow++
			}
		}
	}
	if o.Center <= 0 || n.Center <= 0 {
		return math.NaN(), false
	}
	pct := 100 * (n.Center/o.Center - 1)
	ca.Total++
	if math.Abs(pct) <= within {
		ca.Agree++
	}
	if !o.OK() || !n.OK() {
		return pct, false
	}
	ca.Paired++
	h := math.Hypot(halfWidth(o), halfWidth(n))
	honest := math.Abs(n.Center-o.Center) <= h
	if honest {
		ca.Honest++
	}
	return pct, honest
}

// halfWidth is the interval's farther end from its center, in its unit.
func halfWidth(iv model.Interval) float64 {
	return math.Max(iv.Hi-iv.Center, iv.Center-iv.Lo)
}

// medianAbs is the median of |get(c)| over the cells where it is a number;
// NaN without any.
func medianAbs(cells []AgreeCell, get func(AgreeCell) float64) float64 {
	vs := make([]float64, len(cells))
	for i, c := range cells {
		vs[i] = get(c)
	}
	return medianAbsOf(vs)
}

// medianAbsOf is the median of |v| over the vs that are numbers; NaN
// without any.
func medianAbsOf(vs []float64) float64 {
	var abs []float64
	for _, v := range vs {
		if !math.IsNaN(v) {
			abs = append(abs, math.Abs(v))
		}
	}
	m, ok := stats.Median(abs)
	if !ok {
		return math.NaN()
	}
	return m
}

// writeAgreement renders the agreement section of the Markdown output.
func writeAgreement(b *strings.Builder, a Agreement) {
	if a.Pairs != nil && len(a.Pairs.Pairs) > 0 {
		writePairAgreement(b, *a.Pairs)
	}
	fmt.Fprintf(b, "\n### Agreement of the reported numbers\n\n"+
		"Each run at its own steady level (what its COMPARISON.md reports), steady throughput (median over the level's windows):\n"+
		"**%d of %d cells agree within ±%g%%** (%s), median |Δ| %s; the steady level is the same in %d of %d.\n"+
		"Requests per CPU-second of the IdP (each report's req/CPU-s column): %d of %d cells within ±%g%% (%s), median |Δ| %s.\n"+
		"At one host speed (Δ qps with the Δ host speed taken out): %d of %d cells within ±%g%% (%s), median |Δ| %s.\n"+
		"Δ host speed: how much faster NEW's cores ran than OLD's in the cell's windows, by the host probe the sampler records "+
		"(fixed work's CPU time; – where a side has none): a Δ qps that follows it is the machine's, not the product's.\n\n",
		a.Agree, a.Total, a.Within, pctOf(a.Agree, a.Total), medianPct(a.MedianPct), a.SameLvl, a.Total,
		a.EffAgree, a.EffTotal, a.Within, pctOf(a.EffAgree, a.EffTotal), medianPct(a.EffMedianPct),
		a.HostAgree, a.HostTotal, a.Within, pctOf(a.HostAgree, a.HostTotal), medianPct(a.HostMedianPct))
	b.WriteString("| product | scenario | steady level OLD → NEW | qps OLD → NEW | spread OLD / NEW | Δ qps | within | req/CPU-s OLD → NEW | Δ req/CPU-s | Δ host speed | Δ qps at one host speed |\n")
	b.WriteString("|---|---|---|--:|--:|--:|---|--:|--:|--:|--:|\n")
	for _, c := range a.Cells {
		rep := c.Row.Reported
		if c.Why != "" {
			fmt.Fprintf(b, "| %s | %s | %s → %s | – | – | – | %s | – | – | – | – |\n", mdCell(c.Row.Product), c.Row.Scenario,
				orDash(rep.OldLevel), orDash(rep.NewLevel), c.Why)
			continue
		}
		mark := "yes"
		if !c.Within {
			mark = "**no**"
		}
		fmt.Fprintf(b, "| %s | %s | %s → %s | %s → %s | %s / %s | %s | %s | %s → %s | %s | %s | %s |\n", mdCell(c.Row.Product), c.Row.Scenario,
			rep.OldLevel, rep.NewLevel, steps.FormatQPS(rep.Old.QPS.Median), steps.FormatQPS(rep.New.QPS.Median),
			spreadOf(rep.Old.QPS), spreadOf(rep.New.QPS), formatPct(c.DeltaPct), mark,
			effOf(rep.OldEff), effOf(rep.NewEff), effDelta(c), pctOrDash(c.HostDeltaPct), pctOrDash(c.EqualHostDeltaPct))
	}
	writeCapacityAgreement(b, a)
	writeShareAgreement(b, a)
}

// pctOrDash is formatPct, "–" for NaN.
func pctOrDash(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return formatPct(v)
}

// spreadOf: "±3% (3)", the report's spread (steps.Spread.Pct) of the
// windows, with their number.
func spreadOf(s Stat) string {
	if s.N < 2 {
		return fmt.Sprintf("– (%d)", s.N)
	}
	sp := steps.Spread{Min: s.Min, Median: s.Median, Max: s.Max, N: s.N}
	return fmt.Sprintf("±%.0f%% (%d)", sp.Pct(), s.N)
}

// effOf renders a side's requests per CPU-second, "–" without one (the
// report's reason is in its own table).
func effOf(f model.Figure) string {
	if !f.OK {
		return "–"
	}
	return steps.FormatQPS(f.Value)
}

func effDelta(c AgreeCell) string { return pctOrDash(c.EffDeltaPct) }

func medianPct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", v)
}

func pctOf(n, total int) string {
	if total == 0 {
		return "no cells"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
}

// writeCapacityAgreement renders the capacities' agreement: raw, at one
// host speed, the intervals' widths and whether they cover the difference.
func writeCapacityAgreement(b *strings.Builder, a Agreement) {
	fmt.Fprintf(b, "\n### Agreement of the capacities\n\n"+
		"Capacity: the median over the windows of every level on the plateau, with its distribution-free 95%% interval "+
		"(at one host speed: each window's qps at OLD's reference host probe, each run's own slope).\n\n")
	b.WriteString("| figure | within ±" + fmt.Sprintf("%g%%", a.Within) + " | median abs(Δ) | intervals within ±" + fmt.Sprintf("%g%%", NarrowPct) + " | Δ within √(h₁²+h₂²) |\n|---|--:|--:|--:|--:|\n")
	for _, x := range []struct {
		name string
		ca   CapacityAgreement
	}{{"capacity, raw", a.Capacity}, {"capacity at one host speed", a.CapacityAdjusted}} {
		fmt.Fprintf(b, "| %s | %d of %d (%s) | %s | %d of %d (%s) | %d of %d (%s) |\n", x.name,
			x.ca.Agree, x.ca.Total, pctOf(x.ca.Agree, x.ca.Total), medianPct(x.ca.MedianPct),
			x.ca.Narrow, x.ca.Intervals, pctOf(x.ca.Narrow, x.ca.Intervals), x.ca.Honest, x.ca.Paired, pctOf(x.ca.Honest, x.ca.Paired))
	}
	b.WriteString("\n| product | scenario | levels OLD / NEW | capacity OLD | capacity NEW | Δ | covered | at one host speed OLD | NEW | Δ | covered |\n")
	b.WriteString("|---|---|---|--:|--:|--:|---|--:|--:|--:|---|\n")
	for _, c := range a.Cells {
		rep := c.Row.Reported
		if rep.OldCap == nil || rep.NewCap == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d / %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(c.Row.Product), c.Row.Scenario,
			len(rep.OldCap.Levels), len(rep.NewCap.Levels),
			model.FormatInterval(rep.OldCap.Raw, steps.FormatQPS, ""), model.FormatInterval(rep.NewCap.Raw, steps.FormatQPS, ""),
			pctOrDash(c.CapPct), covered(c.CapHonest, rep.OldCap.Raw, rep.NewCap.Raw),
			model.FormatInterval(rep.OldCap.Adjusted, steps.FormatQPS, ""), model.FormatInterval(rep.NewCapAtOld, steps.FormatQPS, ""),
			pctOrDash(c.CapAdjPct), covered(c.CapAdjHonest, rep.OldCap.Adjusted, rep.NewCapAtOld))
	}
}

// covered renders whether the difference lies within the combined
// half-widths: "yes", "**no**", "–" without both intervals.
func covered(ok bool, o, n model.Interval) string {
	switch {
	case !o.OK() || !n.OK():
		return "–"
	case ok:
		return "yes"
	}
	return "**no**"
}

// writeShareAgreement renders the agreement of the P99 at each share of
// capacity both runs measured; nothing when neither did.
func writeShareAgreement(b *strings.Builder, a Agreement) {
	if len(a.Shares) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Agreement of the latency at shares of capacity\n\n"+
		"P99 in rate mode at each share of the cell's own capacity in its own run, with its hierarchical bootstrap 95%% interval.\n\n")
	b.WriteString("| figure | within ±" + fmt.Sprintf("%g%%", LatencyWithinPct) + " | median abs(Δ) | intervals within ±" + fmt.Sprintf("%g%%", NarrowPct) + " | Δ within √(h₁²+h₂²) |\n|---|--:|--:|--:|--:|\n")
	for _, x := range a.Shares {
		fmt.Fprintf(b, "| P99 at %d%% | %d of %d (%s) | %s | %d of %d (%s) | %d of %d (%s) |\n", x.Share,
			x.Agree, x.Total, pctOf(x.Agree, x.Total), medianPct(x.MedianPct),
			x.Narrow, x.Intervals, pctOf(x.Narrow, x.Intervals), x.Honest, x.Paired, pctOf(x.Honest, x.Paired))
	}
	b.WriteString("\n| product | scenario | share | P99 OLD ms | P99 NEW ms | Δ | covered |\n|---|---|--:|--:|--:|--:|---|\n")
	for _, x := range a.Shares {
		for _, c := range x.Cells {
			fmt.Fprintf(b, "| %s | %s | %d%% | %s | %s | %s | %s |\n", mdCell(c.Product), c.Scenario, x.Share,
				model.FormatInterval(c.Old, steps.FormatMS, ""), model.FormatInterval(c.New, steps.FormatMS, ""),
				pctOrDash(c.Pct), covered(c.Honest, c.Old, c.New))
		}
	}
	var skipped []string
	for _, x := range a.Shares {
		for _, c := range x.Skipped {
			skipped = append(skipped, fmt.Sprintf("- %s %s at %d%%: %s\n", mdCell(c.Product), c.Scenario, x.Share, mdCell(c.Why)))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\nNot compared (a share the product did not sustain has no latency: its corrected latency is the length of a queue; or its windows qualify on neither side):\n\n")
		b.WriteString(strings.Join(skipped, ""))
	}
}
