package servermetrics

import (
	"fmt"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// Selector picks the series of one endpoint from an exposition: the
// family (a histogram, a summary or a counter; its _count is the request
// count), the labels every series must carry with exactly these values,
// and the label that holds the HTTP status.
type Selector struct {
	Family string            // family name as exposed, without _count/_bucket
	Match  map[string]string // label -> value, all must match
	Status string            // label holding the HTTP status code
}

// String is the selector as PromQL would write it.
func (s Selector) String() string {
	out := s.Family + "{"
	for i, k := range sortedKeys(s.Match) {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%s=%q", k, s.Match[k])
	}
	return out + "}"
}

// Product is what one product exposes: its selectors by scenario, or why
// there is nothing to compare.
type Product struct {
	// Source says where the names come from (read on a running server).
	Source    string
	Scenarios map[string]Selector
	// NA is why the product has no server-side figures; "" when it has.
	NA string
}

// Products is the product knowledge of the server side, by adapter name.
// The names were read on the running servers (see the README's server
// side section for the commands): Keycloak 26.7.3's management /metrics
// with --http-metrics-histograms-enabled=true (Micrometer's
// http_server_requests_seconds, uri = the JAX-RS path template with the
// sub-resource locators' parameters: {realm}, {protocol}, {alias}; see
// testdata/keycloak-26.7.3-summary.prom), Hydra
// v2.3.0's admin /admin/metrics/prometheus (ory/x prometheusx with the
// prefix http_ and the constant label app="hydra"; endpoint = the request
// path with path parameters as {param}, method in lower case; see
// testdata/hydra-v2.3.0.prom).
var Products = map[string]Product{
	"keycloak": {
		Source: "Keycloak 26.7.3 management /metrics: http_server_requests_seconds (histogram with --http-metrics-histograms-enabled=true), labels method, outcome, status, uri",
		Scenarios: map[string]Selector{
			schema.ScenarioDiscovery:         kc("GET", "/realms/{realm}/.well-known/{alias}"),
			schema.ScenarioClientCredentials: kc("POST", "/realms/{realm}/protocol/{protocol}/token"),
			schema.ScenarioRefresh:           kc("POST", "/realms/{realm}/protocol/{protocol}/token"),
			schema.ScenarioIntrospect:        kc("POST", "/realms/{realm}/protocol/{protocol}/token/introspect"),
			schema.ScenarioUserinfo:          kc("GET", "/realms/{realm}/protocol/{protocol}/userinfo"),
		},
	},
	"hydra": {
		Source: "Hydra v2.3.0 admin /admin/metrics/prometheus: http_requests_duration_seconds (histogram), labels app, code, method (lower case), endpoint",
		Scenarios: map[string]Selector{
			schema.ScenarioDiscovery:         hy("get", "/.well-known/openid-configuration"),
			schema.ScenarioClientCredentials: hy("post", "/oauth2/token"),
			schema.ScenarioRefresh:           hy("post", "/oauth2/token"),
			schema.ScenarioIntrospect:        hy("post", "/admin/oauth2/introspect"),
			schema.ScenarioUserinfo:          hy("get", "/userinfo"),
		},
	},
	"refop": {NA: "the reference OP (zitadel/oidc's example server) exposes no metrics endpoint"},
}

func kc(method, uri string) Selector {
	return Selector{Family: "http_server_requests_seconds",
		Match: map[string]string{"method": method, "uri": uri}, Status: "status"}
}

func hy(method, endpoint string) Selector {
	return Selector{Family: "http_requests_duration_seconds",
		Match: map[string]string{"app": "hydra", "method": method, "endpoint": endpoint}, Status: "code"}
}

// Lookup returns the selector of product's scenario, or why there is none.
func Lookup(product, scenario string) (Selector, string) {
	p, ok := Products[product]
	switch {
	case !ok:
		return Selector{}, fmt.Sprintf("no server-side metric names are known for %s", product)
	case p.NA != "":
		return Selector{}, p.NA
	}
	sel, ok := p.Scenarios[scenario]
	if !ok {
		return Selector{}, fmt.Sprintf("no server-side metric is known for %s %s (one request of it is not one request to one endpoint)", product, scenario)
	}
	return sel, ""
}

// ParseSelector reads a selector written as PromQL writes one,
// family{label="value",...} (exact matches only), with the label that
// holds the status; expfmt's text parser reads it as a sample line, so
// quoting and escapes follow the exposition format.
func ParseSelector(text, status string) (Selector, error) {
	fams, err := Parse("selector", strings.NewReader(text+" 0\n"))
	if err != nil || len(fams) != 1 {
		return Selector{}, fmt.Errorf("selector %q: want family{label=\"value\",...}", text)
	}
	sel := Selector{Match: map[string]string{}, Status: status}
	for name, f := range fams {
		sel.Family = name
		for _, lp := range f.GetMetric()[0].GetLabel() {
			sel.Match[lp.GetName()] = lp.GetValue()
		}
	}
	return sel, nil
}

// FromRecord is the selector a step recorded, when it recorded one.
func FromRecord(r *schema.ServerSelector) Selector {
	return Selector{Family: r.Family, Match: r.Match, Status: r.StatusLabel}
}

// Record is the selector as a step records it.
func (s Selector) Record() *schema.ServerSelector {
	return &schema.ServerSelector{Family: s.Family, Match: s.Match, StatusLabel: s.Status}
}
