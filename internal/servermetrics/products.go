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
// there is nothing to compare. Each product's is in its entry
// (products/NAME/product.go, internal/product.Product.ServerMetrics); the
// names there were read on the running servers (docs/reading-the-report.md's
// server side section has the commands; the scrapes are testdata here).
type Product struct {
	// Source says where the names come from (read on a running server).
	Source    string
	Scenarios map[string]Selector
	// NA is why the product has no server-side figures; "" when it has.
	NA string
}

// Known returns what a product exposes, by its adapter name; false when
// nothing is known of it (the registry's products.ServerMetrics; nil: nothing
// is known of any product).
type Known func(product string) (Product, bool)

// Lookup returns the selector of product's scenario, or why there is none.
func (k Known) Lookup(product, scenario string) (Selector, string) {
	var p Product
	ok := false
	if k != nil {
		p, ok = k(product)
	}
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

// Empty reports whether p says nothing: neither selectors nor a reason.
func (p Product) Empty() bool { return p.NA == "" && len(p.Scenarios) == 0 }

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
