package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/internal/steps"
)

// serverSideTable renders the "Server side" section.
func (m *md) serverSideTable() {
	if len(m.r.Server) == 0 {
		return
	}
	m.printf("## Server side\n\n")
	if !slices.ContainsFunc(m.r.Server, func(s model.ServerSide) bool { return s.Step.Step.ServerMetrics != nil }) {
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
