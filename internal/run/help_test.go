package run

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+HelpFile+" from Help")

// TestHelpFile: the help scripts/run-comparison.sh prints for --help
// without building anything is the run tool's own (go test ./internal/run
// -run TestHelpFile -update writes it).
func TestHelpFile(t *testing.T) {
	path := filepath.Join("..", "..", HelpFile)
	if *update {
		if err := os.WriteFile(path, []byte(Help), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != Help {
		t.Errorf("%s is not the run tool's --help (%v): go test ./internal/run -run TestHelpFile -update", HelpFile, err)
	}
}
