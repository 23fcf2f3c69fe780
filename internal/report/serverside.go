package report

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/internal/steps"
)

// ServerSide is the product's own view of one steady cell: what the
// server counted for the scenario's endpoint between the steady window's
// start and end scrapes (loadstep --server-metrics), beside loadstep's
// count.
type ServerSide struct {
	Scenario schema.ScenarioInfo
	Product  string
	Step     *StepFile // the cell's steady window
	NA       string    // why there are no server-side figures; "" when there are
	Selector string    // the series counted, as PromQL writes them
	Window   servermetrics.Window
	Loadstep int64 // loadstep's requests in the window
	// Slack is how far the two counts may differ at the window's edges
	// (servermetrics.EdgeSlack); Agrees: within TolerancePct plus Slack.
	Slack  int64
	Agrees bool
}

// Diff is the server's count minus loadstep's.
func (s ServerSide) Diff() int64 { return s.Window.Requests - s.Loadstep }

// parseProm reads one raw scrape; tests replace it.
type parseProm func(path string) (servermetrics.Families, error)

// serverSide computes a row per cell that has a steady window; known
// names each product's series for the steps that recorded none.
func (r *Report) serverSide(parse parseProm, known servermetrics.Known) {
	for _, c := range r.Cells {
		ls := c.SteadyStep()
		if ls == nil {
			continue
		}
		row := ServerSide{Scenario: c.Scenario, Product: c.Product, Step: &ls.StepFile, Loadstep: ls.Step.Requests}
		row.NA = row.fill(parse, known)
		r.Server = append(r.Server, row)
	}
}

// fill computes the row's figures, or returns why it cannot.
func (s *ServerSide) fill(parse parseProm, known servermetrics.Known) string {
	st := s.Step.Step
	if st.CountUnit == schema.CountIterations || schema.IterationScenario(st.Scenario) {
		return "one iteration is several requests to several endpoints"
	}
	sel, why := known.Lookup(s.Product, st.Scenario)
	sm := st.ServerMetrics
	if sm == nil {
		if why != "" {
			return why
		}
		return "the step has no server scrapes (its loadstep ran without --server-metrics)"
	}
	if sm.Selector != nil {
		sel, why = servermetrics.FromRecord(sm.Selector), ""
	}
	if why != "" {
		return why
	}
	s.Selector = sel.String()
	start, end, why := edges(sm.Scrapes)
	if why != "" {
		return why
	}
	dir := filepath.Dir(s.Step.Path)
	sf, err := parse(scrapePath(dir, start.File))
	if err != nil {
		return err.Error()
	}
	ef, err := parse(scrapePath(dir, end.File))
	if err != nil {
		return err.Error()
	}
	if s.Window, err = servermetrics.Delta(sf, ef, sel); err != nil {
		return err.Error()
	}
	s.Slack = servermetrics.EdgeSlack(st.Connections, st.QPS, st.Start, start)
	s.Agrees = servermetrics.Agrees(s.Window.Requests, s.Loadstep, s.Slack)
	return ""
}

// edges are a step's start and end scrapes, or why they cannot be used.
func edges(scrapes []schema.ServerScrape) (start, end schema.ServerScrape, why string) {
	i := slices.IndexFunc(scrapes, func(x schema.ServerScrape) bool { return x.Edge == schema.EdgeStart })
	j := slices.IndexFunc(scrapes, func(x schema.ServerScrape) bool { return x.Edge == schema.EdgeEnd })
	switch {
	case i < 0:
		return start, end, "no start scrape (the step ended in its warmup)"
	case j < 0:
		return start, end, "no end scrape"
	case scrapes[i].Error != "":
		return start, end, "the start scrape failed: " + scrapes[i].Error
	case scrapes[j].Error != "":
		return start, end, "the end scrape failed: " + scrapes[j].Error
	}
	return scrapes[i], scrapes[j], ""
}

// scrapePath resolves a recorded scrape file against the step's directory.
func scrapePath(dir, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dir, file)
}

// serverSideTable renders the "Server side" section.
func (m *md) serverSideTable() {
	if len(m.r.Server) == 0 {
		return
	}
	m.printf("## Server side\n\n")
	if !slices.ContainsFunc(m.r.Server, func(s ServerSide) bool { return s.Step.Step.ServerMetrics != nil }) {
		m.printf("N/A: no steady window of this run scraped the product's own metrics (loadstep --server-metrics,\n")
		m.printf("which the adapters' metricsargs give; records from before it have none).\n\n")
		return
	}
	m.printf("The product's own metrics over each steady window: loadstep scrapes the product's Prometheus\n")
	m.printf("endpoint when the window starts and again after its drain, and the difference of the two is what\n")
	m.printf("the server counted for the scenario's endpoint. \"Allowed\" is %g%% of loadstep's count plus what\n", servermetrics.TolerancePct)
	m.printf("the edges explain: up to one request per connection in flight at each edge, and the requests\n")
	m.printf("that completed before the start scrape was answered (qps × its lag). Beyond that the row says\n")
	m.printf("**differs**. Server percentiles come from histogram buckets, interpolated linearly inside the\n")
	m.printf("bucket they fall in (as PromQL's histogram_quantile): their resolution is the bucket bounds',\n")
	m.printf("not loadstep's. Raw scrapes (`*.metrics.start.prom`, `*.metrics.end.prom`) lie beside each step.\n\n")
	m.printf("| Scenario | Product | c | Server requests | loadstep requests | Difference | Allowed | Server errors by status | Server P50 / P95 / P99 ms | Counts |\n")
	m.printf("|---|---|--:|--:|--:|--:|--:|---|---|---|\n")
	for _, s := range m.r.Server {
		sc := s.Scenario.ID + " " + s.Scenario.Name
		c := s.Step.Step.Connections
		if s.NA != "" {
			m.printf("| %s | %s | %d | N/A | %s | – | – | – | – | N/A: %s |\n", sc, s.Product, c, steps.Thousands(s.Loadstep), cell(s.NA))
			continue
		}
		agree := "agree"
		if !s.Agrees {
			agree = "**differs**"
		}
		allowed := int64(servermetrics.TolerancePct/100*float64(s.Loadstep)) + s.Slack
		m.printf("| %s | %s | %d | %s | %s | %+d | ±%s | %s | %s | %s |\n", sc, s.Product, c,
			steps.Thousands(s.Window.Requests), steps.Thousands(s.Loadstep), s.Diff(), steps.Thousands(allowed),
			statusText(s.Window), quantileText(s.Window.Latency), agree)
	}
	m.printf("\n")
	m.serverSources()
}

// serverSources lists the series each product's rows counted.
func (m *md) serverSources() {
	seen := map[string]bool{}
	var lines []string
	for _, s := range m.r.Server {
		if s.Selector == "" || seen[s.Product+s.Selector] {
			continue
		}
		seen[s.Product+s.Selector] = true
		lines = append(lines, fmt.Sprintf("- %s %s: `%s`", s.Product, s.Scenario.Name, s.Selector))
	}
	if len(lines) == 0 {
		return
	}
	m.printf("Series counted (summed over every status):\n\n%s\n\n", strings.Join(lines, "\n"))
}

// statusText is "0" or the non-2xx/3xx statuses with their counts.
func statusText(w servermetrics.Window) string {
	if w.Errors == 0 {
		return "0"
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(w.ByStatus)) {
		if len(code) == 3 && (code[0] == '2' || code[0] == '3') {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s", cmp.Or(code, "(none)"), steps.Thousands(w.ByStatus[code])))
	}
	return fmt.Sprintf("%s (%s)", steps.Thousands(w.Errors), strings.Join(parts, ", "))
}

// quantileText is "P50 / P95 / P99", or why there are none.
func quantileText(q *servermetrics.Quantiles) string {
	if q == nil {
		return "N/A: no histogram buckets"
	}
	out := fmt.Sprintf("%s / %s / %s", steps.FormatMS(q.P50), steps.FormatMS(q.P95), steps.FormatMS(q.P99))
	if q.Capped {
		out += " (≥: beyond the last finite bucket)"
	}
	return out
}

// ServerRow is the server side of a steady cell in `aggregate steady`'s
// JSON: NA with the reason, or the server's figures beside loadstep's.
type ServerRow struct {
	NA               string           `json:"na,omitempty"`           // why there are no figures
	Requests         int64            `json:"requests"`               // the server's count in the window
	LoadstepRequests int64            `json:"loadstep_requests"`      // loadstep's
	Slack            int64            `json:"slack"`                  // requests the edges explain (servermetrics.EdgeSlack)
	Agrees           bool             `json:"agrees"`                 // within TolerancePct plus slack
	Errors           int64            `json:"errors"`                 // the server's non-2xx/3xx answers
	ByStatus         map[string]int64 `json:"by_status,omitempty"`    // the server's count by status
	P50MS            *float64         `json:"p50_ms,omitempty"`       // bucket-limited, ms
	P95MS            *float64         `json:"p95_ms,omitempty"`       // bucket-limited, ms
	P99MS            *float64         `json:"p99_ms,omitempty"`       // bucket-limited, ms
	Selector         string           `json:"selector,omitempty"`     // the series counted
	StartScrape      string           `json:"start_scrape,omitempty"` // the start scrape's file, as recorded
	EndScrape        string           `json:"end_scrape,omitempty"`   // the end scrape's file, as recorded
}

// serverRow is cell c's server side, nil when c has no steady window.
func (r *Report) serverRow(c Cell) *ServerRow {
	i := slices.IndexFunc(r.Server, func(s ServerSide) bool {
		return s.Product == c.Product && s.Scenario.Name == c.Scenario.Name
	})
	if i < 0 {
		return nil
	}
	s := r.Server[i]
	row := &ServerRow{NA: s.NA, Requests: s.Window.Requests, LoadstepRequests: s.Loadstep, Slack: s.Slack,
		Agrees: s.Agrees, Errors: s.Window.Errors, ByStatus: s.Window.ByStatus, Selector: s.Selector}
	if sm := s.Step.Step.ServerMetrics; sm != nil {
		if start, end, why := edges(sm.Scrapes); why == "" {
			row.StartScrape, row.EndScrape = start.File, end.File
		}
	}
	if q := s.Window.Latency; q != nil {
		row.P50MS, row.P95MS, row.P99MS = &q.P50, &q.P95, &q.P99
	}
	return row
}
