package products

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/idpbench/idpbench"

// TestEngineImportsNoProduct holds docs/design.md's rule (Layout): the
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

// internalTestsImportProducts are the packages under internal/ whose tests
// import products/, each with why; no package under internal/ imports one
// in its code, the registry is wired in cmd/ (cmd/run).
var internalTestsImportProducts = map[string]string{
	module + "/internal/run":    "its flows and help run with the registry's default products and names",
	module + "/internal/e2e":    "the quick run's products held to their registry entries",
	module + "/internal/report": "the report's rows checked against the registry's products",
}

// TestInternalImportsNoProduct: no package under internal/ imports a
// package under products/, and no test of one but the exceptions above.
func TestInternalImportsNoProduct(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list %s/internal/...: %v", module, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkg := f[0]
		for i, imports := range f[1:] {
			if _, ok := internalTestsImportProducts[pkg]; ok && i == 1 {
				continue
			}
			if p := productImport(strings.Fields(imports)); p != "" {
				t.Errorf("%s imports %s%s: internal/ imports no product (a login protocol goes in internal/login, the registry is wired in cmd/)",
					pkg, p, map[int]string{1: " in its tests"}[i])
			}
		}
	}
}

// productImport is the first of imports under products/, "" without one.
func productImport(imports []string) string {
	if i := slices.IndexFunc(imports, func(imp string) bool {
		return imp == module+"/products" || strings.HasPrefix(imp, module+"/products/")
	}); i >= 0 {
		return imports[i]
	}
	return ""
}
