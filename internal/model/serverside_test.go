package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// knownStandIn knows two products: one without metrics (refop's reason)
// and one with a series for discovery only.
func knownStandIn(p string) (servermetrics.Product, bool) {
	switch p {
	case "refop":
		return servermetrics.Product{NA: "the reference OP exposes no metrics endpoint"}, true
	case "hydra":
		return servermetrics.Product{Scenarios: map[string]servermetrics.Selector{
			schema.ScenarioDiscovery: {Family: "req_total", Match: map[string]string{"path": "/d"}, Status: "code"}}}, true
	}
	return servermetrics.Product{}, false
}

// TestServerSideNA: every way a cell can lack server-side figures gives an
// N/A with its reason, never a failed report.
func TestServerSideNA(t *testing.T) {
	dir := t.TempDir()
	good := "# TYPE req_total counter\nreq_total{path=\"/t\",code=\"200\"} 1\n"
	for name, text := range map[string]string{
		"good.prom": good, "bad.prom": "# TYPE req_total counter\nreq_total{path=\"/t\" 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	scrapes := func(startFile, endFile, startErr string) *schema.ServerMetrics {
		return &schema.ServerMetrics{URL: "http://127.0.0.1:1/metrics", Scrapes: []schema.ServerScrape{
			{At: start, Edge: schema.EdgeStart, File: startFile, Error: startErr},
			{At: start.Add(10 * time.Second), Edge: schema.EdgeEnd, File: endFile}},
			Selector: &schema.ServerSelector{Family: "req_total", Match: map[string]string{"path": "/t"}, StatusLabel: "code"}}
	}
	for name, tc := range map[string]struct {
		product, scenario string
		sm                *schema.ServerMetrics
		want              string
	}{
		"no metrics endpoint": {"refop", schema.ScenarioDiscovery, nil, "no metrics endpoint"},
		"not scraped":         {"hydra", schema.ScenarioDiscovery, nil, "without --server-metrics"},
		"unknown product":     {"oidc:x", schema.ScenarioDiscovery, nil, "no server-side metric names are known for oidc:x"},
		"iterations":          {"keycloak", schema.ScenarioAuthCode, nil, "several endpoints"},
		"unreachable":         {"oidc:x", schema.ScenarioDiscovery, scrapes("", "good.prom", "scraping http://127.0.0.1:1/metrics: connection refused"), "the start scrape failed: scraping http://127.0.0.1:1/metrics: connection refused"},
		"malformed":           {"oidc:x", schema.ScenarioDiscovery, scrapes("good.prom", "bad.prom", ""), "bad.prom: text format parsing error in line 2"},
		"missing file":        {"oidc:x", schema.ScenarioDiscovery, scrapes("gone.prom", "good.prom", ""), "gone.prom"},
	} {
		t.Run(name, func(t *testing.T) {
			st := &schema.Step{Product: tc.product, Scenario: tc.scenario, Connections: 2, Requests: 10, Start: start, ServerMetrics: tc.sm}
			s := ServerSide{Product: tc.product, Step: &StepFile{Path: filepath.Join(dir, "s.json"), Step: st}}
			if got := s.fill(servermetrics.ParseFile, knownStandIn); !strings.Contains(got, tc.want) {
				t.Errorf("N/A %q, want it to say %q", got, tc.want)
			}
		})
	}
}
