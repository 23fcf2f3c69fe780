package run

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/idpbench/idpbench/products"
)

var update = flag.Bool("update", false, "rewrite "+HelpFile+" from Help")

// registryHelp is the run tool's --help with the registry's default products.
var registryHelp = Help(products.Default())

// TestHelpFile: the help scripts/run-comparison.sh prints for --help
// without building anything is the run tool's own (go test ./internal/run
// -run TestHelpFile -update writes it).
func TestHelpFile(t *testing.T) {
	path := filepath.Join("..", "..", HelpFile)
	if *update {
		if err := os.WriteFile(path, []byte(registryHelp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != registryHelp {
		t.Errorf("%s is not the run tool's --help (%v): go test ./internal/run -run TestHelpFile -update", HelpFile, err)
	}
}
