package report

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/idpbench/idpbench"

// renderersRead are the packages of the project the renderers may import:
// the model they render, the records' names and constants it carries
// (schema, the server metrics' windows), the number formats (steps) and
// the atomic file writer. No statistics (internal/stats): a figure the
// report prints is the model's.
var renderersRead = []string{module + "/internal/model", module + "/internal/schema", module + "/internal/steps",
	module + "/internal/servermetrics", module + "/internal/atomicfile"}

// TestRenderersReadTheModel: the renderers import only the model and what
// renders it, and only the command that writes COMPARISON.md
// (cmd/aggregate) imports the renderers: run, compare, the experiments
// and k8sstep decide on the model.
func TestRenderersReadTheModel(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	self := module + "/internal/report"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		if pkg == self {
			for _, imp := range imports {
				if strings.HasPrefix(imp, module+"/") && !slices.Contains(renderersRead, imp) {
					t.Errorf("the renderers import %s: they read the model (internal/model) and compute nothing", imp)
				}
			}
			continue
		}
		if slices.Contains(imports, self) && pkg != module+"/cmd/aggregate" {
			t.Errorf("%s imports the renderers: only cmd/aggregate renders; decide on internal/model", pkg)
		}
	}
}
