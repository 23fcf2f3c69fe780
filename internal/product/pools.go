package product

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// RecordPool appends p, a pool minted for the run whose state is stateDir,
// to STATE/pools.jsonl, which provision meta puts into the meta's pools;
// no credential is recorded. An unknown scenario or mode, a size below 1,
// no kind or flow, or no state directory is an error naming it.
func RecordPool(stateDir string, p schema.PoolInfo) error {
	switch {
	case !slices.Contains(Scenarios(), p.Scenario):
		return fmt.Errorf("pool of scenario %q: want one of %s", p.Scenario, strings.Join(Scenarios(), ", "))
	case strings.TrimSpace(p.Kind) == "" || strings.TrimSpace(p.Flow) == "":
		return fmt.Errorf("pool of %s: its kind and flow are required", p.Scenario)
	case !slices.Contains(schema.PoolModes, p.Mode):
		return fmt.Errorf("pool of %s: mode %q: want one of %s", p.Scenario, p.Mode, strings.Join(schema.PoolModes, ", "))
	case p.Size < 1:
		return fmt.Errorf("pool of %s: size %d: want >= 1", p.Scenario, p.Size)
	}
	if fi, err := os.Stat(stateDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("state %s: not a directory", stateDir)
	}
	line, err := json.Marshal(p)
	if err != nil {
		return err
	}
	name := filepath.Join(stateDir, "pools.jsonl")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// One write of a whole line: a reader never sees half a record.
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Close()
}
