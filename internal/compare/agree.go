package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/idpbench/idpbench/internal/report"
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
}

// AgreeCell is one cell of an Agreement.
type AgreeCell struct {
	Row      Row
	DeltaPct float64 // NEW's steady median qps against OLD's, percent; NaN without both
	Within   bool
	Why      string // why the cell has no figure ("no steady state in NEW")
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
		c := AgreeCell{Row: row, DeltaPct: math.NaN()}
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
		}
		a.Cells = append(a.Cells, c)
	}
	return a
}

// writeAgreement renders the agreement section of the Markdown output.
func writeAgreement(b *strings.Builder, a Agreement) {
	fmt.Fprintf(b, "\n### Agreement of the reported numbers\n\n"+
		"Each run at its own steady level (what its COMPARISON.md reports), steady throughput (median over the level's windows):\n"+
		"**%d of %d cells agree within ±%g%%** (%s); the steady level is the same in %d of %d.\n\n",
		a.Agree, a.Total, a.Within, pctOf(a.Agree, a.Total), a.SameLvl, a.Total)
	b.WriteString("| product | scenario | steady level OLD → NEW | qps OLD → NEW | spread OLD / NEW | Δ qps | within |\n")
	b.WriteString("|---|---|---|--:|--:|--:|---|\n")
	for _, c := range a.Cells {
		rep := c.Row.Reported
		if c.Why != "" {
			fmt.Fprintf(b, "| %s | %s | %s → %s | – | – | – | %s |\n", mdCell(c.Row.Product), c.Row.Scenario,
				orDash(rep.OldLevel), orDash(rep.NewLevel), c.Why)
			continue
		}
		mark := "yes"
		if !c.Within {
			mark = "**no**"
		}
		fmt.Fprintf(b, "| %s | %s | %s → %s | %s → %s | %s / %s | %s | %s |\n", mdCell(c.Row.Product), c.Row.Scenario,
			rep.OldLevel, rep.NewLevel, report.FormatQPS(rep.Old.QPS.Median), report.FormatQPS(rep.New.QPS.Median),
			spreadOf(rep.Old.QPS), spreadOf(rep.New.QPS), formatPct(c.DeltaPct), mark)
	}
}

// spreadOf: "±3% (3)", the report's spread (report.Spread.Pct) of the
// windows, with their number.
func spreadOf(s Stat) string {
	if s.N < 2 {
		return fmt.Sprintf("– (%d)", s.N)
	}
	sp := report.Spread{Min: s.Min, Median: s.Median, Max: s.Max, N: s.N}
	return fmt.Sprintf("±%.0f%% (%d)", sp.Pct(), s.N)
}

func pctOf(n, total int) string {
	if total == 0 {
		return "no cells"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
}
