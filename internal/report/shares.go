package report

import (
	"fmt"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// shareP99 is the main table's P99 at share percent of c's capacity: "12.3
// [11.0, 14.1]"; for a share the product did not sustain, that and the
// P99 at the highest share below it that it did, with that share: "not
// sustained (7,659/s); 64%: 12.3 [11.8, 13.0]", or why there is none; the
// reason when it has none, "–" without windows there.
func shareP99(c model.Cell, share int) string {
	sl := c.At(share)
	switch {
	case sl == nil:
		return "–"
	case sl.Unsustained:
		return cell(fmt.Sprintf("not sustained (%s/s); %s", steps.FormatQPS(sl.RateRPS), sustainedBelow(c, share)))
	case sl.NA != "":
		return "N/A: " + cell(sl.NA)
	}
	return cell(model.FormatInterval(sl.P99, steps.FormatMS, ""))
}

// sustainedBelow is the P99 at the highest share below share that c
// sustained, with that share ("64%: 12.3 [11.8, 13.0]"), or why there is
// none (the search's outcome).
func sustainedBelow(c model.Cell, share int) string {
	var best *model.ShareLatency
	for i := range c.Shares {
		if sl := &c.Shares[i]; sl.Share < share && sl.Sustained && sl.NA == "" && (best == nil || sl.Share > best.Share) {
			best = sl
		}
	}
	if best != nil {
		return fmt.Sprintf("%d%%: %s", best.Share, model.FormatInterval(best.P99, steps.FormatMS, ""))
	}
	if c.Search != nil {
		return "none sustained below: " + c.Search.Why
	}
	return "none sustained below (no search)"
}

// sharesTable renders every cell's latency at shares of its capacity.
func (m *md) sharesTable() {
	var rows []model.Cell
	for _, c := range m.r.Cells {
		if len(c.Shares) > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	m.printf("### Latency at shares of capacity\n\n")
	m.printf("Each cell measured again in rate mode (open loop: latency from each request's intended send\n")
	m.printf("time, so a queue that builds up counts) at a fixed share of its raw capacity above, on enough\n")
	m.printf("connections that the load generator is not the queue (twice the plateau's most, or more).\n")
	m.printf("Every product is compared at the same share of its own capacity: a latency at 80%% is what a\n")
	m.printf("deployment sized to that capacity sees near its limit, at 50%% with headroom. A window is\n")
	m.printf("**sustained** when the product kept up with its schedule: not when its corrected P50 grew more\n")
	m.printf("than 10 ms a second through the window (Theil-Sen) and ended more than 1%% of the window above its\n")
	m.printf("lowest interval (docs/design.md, Sustained or not). A share not sustained has no latency -- its\n")
	m.printf("corrected latency is the length of a queue -- and the run searched below it for the highest share\n")
	m.printf("that was (rows marked search). Each figure is from the windows' histograms merged; its 95%%\n")
	m.printf("interval is a hierarchical bootstrap (%d resamples, seeded): windows with replacement, then each\n", model.ShareResamples)
	m.printf("drawn window's intervals; with one window it holds the variation between that window's intervals\n")
	m.printf("only. It needs %d intervals. Rate: intended, and what the product completed a second within the\n", model.MinShareSeconds)
	m.printf("windows. Late: requests sent more than 2 ms behind their schedule, or never.\n\n")
	m.printf("| Scenario | Product | Share | Rate: intended / completed | Sustained | P50 ms [95%%] | P95 ms [95%%] | P99 ms [95%%] | Windows (intervals) | Late |\n")
	m.printf("|---|---|--:|--:|---|--:|--:|--:|--:|--:|\n")
	for _, c := range rows {
		unit := "/s"
		if c.Iterations() {
			unit = " iter/s"
		}
		for _, sl := range c.Shares {
			sc := c.Scenario.ID + " " + c.Scenario.Name
			rate := steps.FormatQPS(sl.RateRPS) + " / –"
			if sl.CompletedRPS > 0 {
				rate = steps.FormatQPS(sl.RateRPS) + " / " + steps.FormatQPS(sl.CompletedRPS) + unit
			}
			share := fmt.Sprintf("%d%%", sl.Share)
			if sl.Search {
				share += " (search)"
			}
			verdict := "yes: " + sl.Verdict
			if !sl.Sustained {
				verdict = "**no**: " + sl.Verdict
			}
			if sl.NA != "" {
				m.printf("| %s | %s | %s | %s | %s | N/A: %s | – | – | %d (%d) | – |\n", sc, c.Product, share, rate, cell(verdict), cell(sl.NA), len(sl.Windows), sl.Seconds)
				continue
			}
			m.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %d (%d) | %d |\n", sc, c.Product, share, rate, cell(verdict),
				cell(model.FormatInterval(sl.P50, steps.FormatMS, "")), cell(model.FormatInterval(sl.P95, steps.FormatMS, "")), cell(model.FormatInterval(sl.P99, steps.FormatMS, "")),
				len(sl.Windows), sl.Seconds, sl.Late)
		}
		if c.Search != nil && c.Search.Outcome != schema.SearchFound {
			m.printf("| %s %s | %s | search below %d%% | | | %s | | | | |\n", c.Scenario.ID, c.Scenario.Name, c.Product, c.Search.Below, cell(c.Search.Why))
		}
	}
	m.printf("\n")
}
