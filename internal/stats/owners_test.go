package stats

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// seeded are the other seeded generators in non-test code, neither a
// resample: the run's drawn order of products and scenarios, and the
// synthetic latencies of the tests' records (recordtest, tests only).
var seeded = []string{"internal/run/order.go", "internal/recordtest/fixtures.go"}

// TestOneMedianOneBootstrap: outside this package no non-test function
// named median-something sorts (a median of its own), and nothing seeds a
// generator (rand.NewPCG) but the run's order and the tests' records: every median of float
// samples is Median and every bootstrap is a Resampler.
func TestOneMedianOneBootstrap(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`(?i)^median`)
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel != "." && strings.HasPrefix(d.Name(), "."), d.Name() == "testdata", rel == "results", rel == "internal/stats":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Body != nil && named.MatchString(fn.Name.Name) && calls(fn.Body, "slices.Sort", "sort.Float64s", "sort.Slice", "sort.Sort") {
				t.Errorf("%s: %s sorts: a median of its own (use stats.Median or stats.MedianInPlace)", rel, fn.Name.Name)
			}
		}
		if !slices.Contains(seeded, rel) && calls(f, "rand.NewPCG") {
			t.Errorf("%s: seeds a generator (rand.NewPCG): a bootstrap of its own (use stats.Resampler)", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: not the module", files, root)
	}
}

// calls says whether n calls any of the functions named pkg.Name.
func calls(n ast.Node, names ...string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				for _, name := range names {
					if id.Name+"."+sel.Sel.Name == name {
						found = true
					}
				}
			}
		}
		return !found
	})
	return found
}
