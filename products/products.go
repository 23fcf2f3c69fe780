// Package products is the registry: every product idpbench knows, one line
// each. A product is one folder, products/NAME: its facts and answers as Go
// data (NAME/product.go, an internal/product.Product), its adapter, its
// readback, its server-metric series, its docs page and, with a compose
// mode, its compose file and image recipe (NAME/compose.yml;
// docs/design-reference.md, "Products"). Shared machinery knows products only through
// internal/product and this list.
package products

import (
	"slices"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/products/example"
	"github.com/idpbench/idpbench/products/hydra"
	"github.com/idpbench/idpbench/products/keycloak"
	"github.com/idpbench/idpbench/products/nodeoidc"
	"github.com/idpbench/idpbench/products/oidc"
	"github.com/idpbench/idpbench/products/refop"
	"github.com/idpbench/idpbench/products/spring"
	"github.com/idpbench/idpbench/products/zitadel"
)

// All returns every product with an entry, one line each. A run without
// --only measures those InDefaultRun in this order (round 1 runs them so).
func All() []product.Product {
	return []product.Product{
		refop.Product(),
		hydra.Product(),
		keycloak.Product(),
		zitadel.Product(),
		spring.Product(),   // Spring Authorization Server
		nodeoidc.Product(), // node oidc-provider
		oidc.Product(),     // the generic adapter: any IdP from a configuration file
		example.Product(),  // docs/products.md's "Adding a product"
	}
}

// Default returns the names of the products a run without --only measures.
func Default() []string {
	var n []string
	for _, p := range All() {
		if p.InDefaultRun {
			n = append(n, p.Name)
		}
	}
	return n
}

// References returns the names of the reference products (Reference).
func References() []string {
	return NamesWith(func(p product.Product) bool { return p.Reference })
}

// Lookup returns the product called name.
func Lookup(name string) (product.Product, bool) {
	for _, p := range All() {
		if p.Name == name {
			return p, true
		}
	}
	return product.Product{}, false
}

// ServerMetrics returns what the product called name exposes of its own
// metrics (servermetrics.Known); false when nothing is known of it.
func ServerMetrics(name string) (servermetrics.Product, bool) {
	p, ok := Lookup(name)
	if !ok || p.ServerMetrics.Empty() {
		return servermetrics.Product{}, false
	}
	return p.ServerMetrics, true
}

// Names returns the names of All, sorted.
func Names() []string { return NamesWith(func(product.Product) bool { return true }) }

// NamesWith returns the names of the products for which has is true,
// sorted.
func NamesWith(has func(product.Product) bool) []string {
	var n []string
	for _, p := range All() {
		if has(p) {
			n = append(n, p.Name)
		}
	}
	slices.Sort(n)
	return n
}
