package report

import (
	"math"
	"strconv"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// timeUse renders "Where the time goes"; nothing without phase records.
func (m *md) timeUse() {
	t := m.r.Time
	if t == nil {
		return
	}
	m.printf("## Where the time goes\n\n")
	m.printf("The run's wall time by phase, from %s: run-comparison.sh writes a record as each phase ends.\n", m.links(t.Files))
	m.printf("%s; the wall time is the sum of the sessions' spans (a resumed run adds a session).\n", sessionsText(t.Sessions))
	m.printf("A ladder's time is split by its steps: warmups are their warmup, measured windows their\n")
	m.printf("measured windows (end - start), and the rest (minting pools, starting each loadstep, the health\n")
	m.printf("checks between steps) is pool minting and step overhead. The GC-jitter run is its own row.\n\n")
	m.printf("| Where |")
	for _, p := range t.Products {
		m.printf(" %s s |", cell(p))
	}
	m.printf(" Total s | Total min | %% of wall time |\n|---|")
	for range t.Products {
		m.printf("--:|")
	}
	m.printf("--:|--:|--:|\n")
	total := model.TimeRow{What: "**total**", S: map[string]float64{}}
	for _, row := range t.Rows {
		m.timeRow(row, t)
		for k, v := range row.S {
			total.S[k] += v
		}
	}
	m.timeRow(total, t)
	m.printf("\nMeasured windows: %s of the wall time (%s min of %s min).", pctOf(t.MeasuredS, t.WallS),
		minutes(t.MeasuredS), minutes(t.WallS))
	if t.JitterMeasuredS > 0 {
		incl := t.MeasuredS + t.JitterMeasuredS
		m.printf(" Measured windows incl. the GC-jitter runs' windows: %s (%s min).", pctOf(incl, t.WallS), minutes(incl))
	}
	m.printf("\n\n")
}

func (m *md) timeRow(row model.TimeRow, t *model.TimeUse) {
	m.printf("| %s |", row.What)
	for _, p := range t.Products {
		m.printf(" %s |", seconds(row.S, p))
	}
	total := row.TotalS()
	m.printf(" %s | %s | %s |\n", secondsText(total), minutes(total), pctOf(total, t.WallS))
}

func sessionsText(n int) string {
	if n == 1 {
		return "One session"
	}
	return strconv.Itoa(n) + " sessions"
}

func minutes(s float64) string { return strconv.FormatFloat(s/60, 'f', 1, 64) }

func pctOf(part, whole float64) string {
	if whole <= 0 {
		return "N/A"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 1, 64) + "%"
}

// seconds is a product's cell: "–" when it has no phase of the row.
func seconds(s map[string]float64, product string) string {
	v, ok := s[product]
	if !ok {
		return "–"
	}
	return secondsText(v)
}

// secondsText: one decimal below 10 s, whole seconds from there.
func secondsText(s float64) string {
	if s < 9.95 {
		return strconv.FormatFloat(s, 'f', 1, 64)
	}
	return steps.Thousands(int64(math.Round(s)))
}
