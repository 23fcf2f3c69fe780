package products

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/idpbench/idpbench"

// TestEngineImportsNoProduct holds docs/design.md's rule (Products): the
// engine (internal/load, internal/mint) and the login protocols below it
// (internal/login/...) depend on no package under products/, not even in
// their tests, and choose a login by the protocol's name.
func TestEngineImportsNoProduct(t *testing.T) {
	engine := []string{module + "/internal/load", module + "/internal/mint", module + "/internal/login/..."}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-test", "-f", "{{.ImportPath}}"}, engine...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps -test %s: %v", strings.Join(engine, " "), err)
	}
	for _, dep := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, _, _ := strings.Cut(dep, " ") // a test variant: "PKG [PKG.test]"
		if pkg == module+"/products" || strings.HasPrefix(pkg, module+"/products/") {
			t.Errorf("the engine (%s) depends on %s: login protocols belong in internal/login, a product's own code in its folder", strings.Join(engine, ", "), pkg)
		}
	}
}

// internalImportsProducts are the packages under internal/ that still
// import products/ directly, each with why; every other one imports none.
var internalImportsProducts = map[string]string{
	module + "/internal/run":    "the run tool orders the products of the registry (products.All)",
	module + "/internal/e2e":    "tests only: the quick run's products held to their registry entries",
	module + "/internal/report": "tests only: the report's rows checked against the registry's products",
}

// TestInternalImportsNoProduct: nothing under internal/ imports a package
// under products/ (tests included), but the exceptions above.
func TestInternalImportsNoProduct(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list %s/internal/...: %v", module, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := f[0]
		if _, ok := internalImportsProducts[pkg]; ok {
			continue
		}
		if i := slices.IndexFunc(f[1:], func(imp string) bool {
			return imp == module+"/products" || strings.HasPrefix(imp, module+"/products/")
		}); i >= 0 {
			t.Errorf("%s imports %s: internal/ imports no product (a login protocol goes in internal/login)", pkg, f[1+i])
		}
	}
}
