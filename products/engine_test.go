package products

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/idpbench/idpbench"

// TestEngineImportsNoProduct holds docs/design.md's rule (Products): the
// engine may import a login protocol library from a product's folder
// (products/hydra/adminaccept, products/zitadel/zitadelapi), never a
// product's own package nor this registry, and chooses a login by the
// protocol's name. Its tests are held to it too.
func TestEngineImportsNoProduct(t *testing.T) {
	engine := []string{module + "/internal/load", module + "/internal/mint"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-test", "-f", "{{.ImportPath}}"}, engine...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps -test %s: %v", strings.Join(engine, " "), err)
	}
	forbidden := map[string]bool{module + "/products": true}
	for _, p := range All() {
		forbidden[module+"/products/"+p.Name] = true
	}
	for _, dep := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, _, _ := strings.Cut(dep, " ") // a test variant: "PKG [PKG.test]"
		if forbidden[pkg] {
			t.Errorf("the engine (%s) depends on %s: a product's own package; import its login library (products/NAME/...) instead", strings.Join(engine, ", "), pkg)
		}
	}
}
