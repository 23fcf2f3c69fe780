package model

import (
	"path/filepath"
	"slices"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
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
