// Package sustaincheck checks a run against the sustain rule
// (steps.Sustain): it judges every rate-mode window of a run again from
// its own intervals, never from the verdict the run wrote, and checks a
// rendered COMPARISON.md against those verdicts: no latency in its main
// table's "P99 at P%" columns, nor in its shares table, from a window the
// rule calls not sustained (`aggregate sustained`;
// docs/design-methodology.md, "Sustained or not").
package sustaincheck

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Window is one rate-mode window judged again.
type Window struct {
	Path, Product, Scenario string
	Share                   int  // its label share=, percent; 0 without one
	Search                  bool // measured by the run's share search
	RateRPS                 float64
	// Judged is the rule applied to the window's intervals; Recorded the
	// verdict the run wrote (nil in records from before it did).
	Judged   schema.Sustain
	Recorded *schema.Sustain
	// FirstP50MS, LastP50MS are the corrected P50 of its first and last
	// second (the intervals with requests within them, their histograms
	// merged; the interval's own P50 for a record without one), ms.
	FirstP50MS, LastP50MS float64
}

// Windows judges every rate-mode step of in again, by product, scenario
// and share.
func Windows(in *model.Inputs) []Window {
	var out []Window
	for _, sf := range in.Steps {
		s := sf.Step
		if s.RateRPS <= 0 {
			continue
		}
		w := Window{Path: sf.Path, Product: sf.Product(), Scenario: s.Scenario, RateRPS: s.RateRPS,
			Search: s.Labels["search"] == "1", Recorded: s.Sustain}
		w.Share, _ = strconv.Atoi(s.Labels["share"])
		judge := *s
		judge.Sustain = nil // the rule again, never the run's verdict
		w.Judged = steps.Sustain(&judge)
		w.FirstP50MS, w.LastP50MS = edgeSeconds(s.Intervals)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Window) int {
		return cmp.Or(cmp.Compare(a.Product, b.Product), cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Share, b.Share), cmp.Compare(a.Path, b.Path))
	})
	return out
}

// edgeSeconds is the corrected P50 of the first and the last second of
// intervals (those with requests), ms.
func edgeSeconds(intervals []schema.Interval) (first, last float64) {
	var with []schema.Interval
	for _, iv := range intervals {
		if iv.Requests > 0 {
			with = append(with, iv)
		}
	}
	if len(with) == 0 {
		return 0, 0
	}
	start, end := with[0].TS, with[len(with)-1].TS+with[len(with)-1].LengthS
	var head, tail []schema.Interval
	for _, iv := range with {
		if iv.TS < start+1-1e-9 {
			head = append(head, iv)
		}
		if iv.TS+iv.LengthS > end-1+1e-9 {
			tail = append(tail, iv)
		}
	}
	return secondP50(head), secondP50(tail)
}

// secondP50 is the P50 of intervals' corrected histograms merged; the
// first interval's own P50 when one has no histogram.
func secondP50(ivs []schema.Interval) float64 {
	h := schema.NewHistogram()
	for _, iv := range ivs {
		d, err := schema.DecodeHistogram(iv.CorrectedHistogram)
		if iv.CorrectedHistogram == "" || err != nil {
			return ivs[0].CorrectedP50MS
		}
		h.Merge(d)
	}
	return schema.Summarize(h).P50
}

// Summary counts the windows by verdict, and how many sustained ones
// opened no slower than twice their last interval (the start-up queue
// kept out of the window).
type Summary struct {
	Windows, Sustained, NotSustained, NotJudged int
	// Recorded is the windows with a verdict of the run's; Disagree those
	// whose recorded verdict is not the rule's.
	Recorded, Disagree int
	// OpenedFlat is the sustained windows whose first interval's corrected
	// P50 is at most twice their last's.
	OpenedFlat int
}

// Summarize counts ws.
func Summarize(ws []Window) Summary {
	var s Summary
	for _, w := range ws {
		s.Windows++
		switch w.Judged.Verdict {
		case schema.SustainYes:
			s.Sustained++
			if w.FirstP50MS <= 2*w.LastP50MS {
				s.OpenedFlat++
			}
		case schema.SustainNo:
			s.NotSustained++
		default:
			s.NotJudged++
		}
		if w.Recorded != nil {
			s.Recorded++
			if w.Recorded.Verdict != w.Judged.Verdict {
				s.Disagree++
			}
		}
	}
	return s
}

// Problems is what is wrong with md (a COMPARISON.md) and the run's
// recorded verdicts against ws, judged again: a recorded verdict that is
// not the rule's; a main-table "P99 at P%" cell with a figure where the
// window at P% is not sustained, or with "not sustained" where it is, or
// whose figure comes from a share (the "64%: ..." beside it) that is not
// sustained; a shares-table row with a latency for a window not sustained.
// None: the report respects the rule.
func Problems(md string, ws []Window) []string {
	var out []string
	for _, w := range ws {
		if w.Recorded != nil && w.Recorded.Verdict != w.Judged.Verdict {
			out = append(out, fmt.Sprintf("%s: the run recorded %s, the rule judges %s (%s)", w.Path, w.Recorded.Verdict, w.Judged.Verdict, w.Judged.Why))
		}
	}
	main := mainTable(md)
	shares := sharesTable(md)
	for _, w := range ws {
		if w.Share == 0 {
			continue
		}
		out = append(out, w.checkMain(main, ws)...)
		out = append(out, w.checkShares(shares)...)
	}
	return out
}

// checkMain checks the window's "P99 at P%" cell of the main table (a
// search window has no column of its own).
func (w Window) checkMain(main map[rowKey]map[string]string, ws []Window) []string {
	row, ok := main[rowKey{w.Product, w.Scenario}]
	if !ok || w.Search {
		return nil
	}
	v, ok := row[fmt.Sprintf("P99 at %d%%", w.Share)]
	if !ok {
		return nil
	}
	not := strings.HasPrefix(v, "not sustained")
	switch w.Judged.Verdict {
	case schema.SustainNo:
		if !not {
			return []string{fmt.Sprintf("%s %s: P99 at %d%% is %q, but the window (%s) is not sustained: %s", w.Product, w.Scenario, w.Share, v, w.Path, w.Judged.Why)}
		}
		if m := fallback.FindStringSubmatch(v); m != nil {
			sh, _ := strconv.Atoi(m[1])
			if !sustainedAt(ws, w.Product, w.Scenario, sh) {
				return []string{fmt.Sprintf("%s %s: P99 at %d%% falls back to %d%%, which the rule does not call sustained", w.Product, w.Scenario, w.Share, sh)}
			}
		}
	case schema.SustainYes:
		if not {
			return []string{fmt.Sprintf("%s %s: P99 at %d%% says %q, but the window (%s) is sustained", w.Product, w.Scenario, w.Share, v, w.Path)}
		}
	default:
		if figure.MatchString(v) {
			return []string{fmt.Sprintf("%s %s: P99 at %d%% is %q from a window the rule cannot judge: %s", w.Product, w.Scenario, w.Share, v, w.Judged.Why)}
		}
	}
	return nil
}

// checkShares checks the window's rows of the shares table: one not
// sustained has no latency there.
func (w Window) checkShares(rows []sharesRow) []string {
	if w.Judged.Verdict == schema.SustainYes {
		return nil
	}
	var out []string
	for _, r := range rows {
		if r.product == w.Product && r.scenario == w.Scenario && r.share == w.Share && figure.MatchString(r.p99) {
			out = append(out, fmt.Sprintf("%s %s: the shares table shows a P99 of %q at %d%%, but the window (%s) is %s", w.Product, w.Scenario, r.p99, w.Share, w.Path, w.Judged.Verdict))
		}
	}
	return out
}

// sustainedAt: every window of the cell at share percent is sustained.
func sustainedAt(ws []Window, product, scenario string, share int) bool {
	n := 0
	for _, w := range ws {
		if w.Product == product && w.Scenario == scenario && w.Share == share {
			if w.Judged.Verdict != schema.SustainYes {
				return false
			}
			n++
		}
	}
	return n > 0
}

var (
	// figure is a cell that starts with a number: a latency.
	figure = regexp.MustCompile(`^[0-9]`)
	// fallback is the share a "not sustained" cell's figure was taken at.
	fallback = regexp.MustCompile(`; ([0-9]+)%: [0-9]`)
)

type rowKey struct{ product, scenario string }

// mainTable is the main table of md by product and scenario name: each
// cell by its column's header. The table is the first whose header starts
// "| Scenario | Product | Capacity".
func mainTable(md string) map[rowKey]map[string]string {
	out := map[rowKey]map[string]string{}
	var header []string
	for line := range strings.Lines(md) {
		cells := split(line)
		switch {
		case header == nil && len(cells) > 2 && cells[0] == "Scenario" && cells[1] == "Product" && strings.HasPrefix(cells[2], "Capacity"):
			header = cells
		case header != nil && len(cells) == 0:
			return out
		case header != nil && len(cells) == len(header) && !strings.HasPrefix(cells[0], "---"):
			row := map[string]string{}
			for i, h := range header {
				row[strings.TrimSuffix(h, " [95%]")] = cells[i]
			}
			out[rowKey{cells[1], scenarioName(cells[0])}] = row
		}
	}
	return out
}

// sharesRow is one row of the shares table.
type sharesRow struct {
	product, scenario string
	share             int
	p99               string
}

// sharesTable is the rows of md's "Latency at shares of capacity" table:
// those whose Share column is a percentage.
func sharesTable(md string) []sharesRow {
	var out []sharesRow
	var p99 = -1
	for line := range strings.Lines(md) {
		cells := split(line)
		switch {
		case len(cells) > 2 && cells[0] == "Scenario" && cells[2] == "Share":
			p99 = slices.IndexFunc(cells, func(c string) bool { return strings.HasPrefix(c, "P99 ms") })
		case p99 >= 0 && len(cells) == 0:
			return out
		case p99 >= 0 && len(cells) > p99:
			pct, _, ok := strings.Cut(cells[2], "%")
			share, err := strconv.Atoi(pct)
			if ok && err == nil {
				out = append(out, sharesRow{cells[1], scenarioName(cells[0]), share, cells[p99]})
			}
		}
	}
	return out
}

// split is a Markdown table row's cells, trimmed; none for another line.
func split(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// scenarioName is "discovery" of "S1 discovery".
func scenarioName(cell string) string {
	if _, name, ok := strings.Cut(cell, " "); ok {
		return name
	}
	return cell
}
