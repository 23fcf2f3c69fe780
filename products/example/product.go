// Package example is the worked example of docs/products.md's "Adding a product":
// the reference OP again, under the name "example", in a folder of its own
// with one line in products/products.go. Its entry takes the reference
// OP's (refop.Product) and renames it; a new product states its own
// (products/hydra/product.go is the model).
package example

import (
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products/refop"
)

// Product is the reference OP under the name "example", with its own docs
// page.
func Product() product.Product {
	p := refop.Product()
	p.Name = "example"
	p.Docs = "products/example/README.md"
	p.InDefaultRun = false // run it by name: --only example
	p.Reference = false    // a product of the comparison, as a new one would be
	return p
}
